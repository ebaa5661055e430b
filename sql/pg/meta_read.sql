-- The fdx schema version of the store (schema.sql writes it).
SELECT schema_version FROM fdx_meta;
