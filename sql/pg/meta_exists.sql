-- Whether the current schema holds fdx_meta (1) or is new to fdx (0).
SELECT count(*) FROM pg_catalog.pg_class
WHERE relname = 'fdx_meta' AND relnamespace = current_schema()::regnamespace;
