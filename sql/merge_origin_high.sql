-- The highest origin number this store has given: read before a merge
-- numbers the stores it brings (merge_apply_origins.sql), whose numbers are
-- then above it.
SELECT coalesce(max(id), 0) FROM history_origin;
