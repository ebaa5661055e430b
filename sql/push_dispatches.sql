-- The dispatch cells of a PostgreSQL store's working copy, in the column order
-- of pg/stage_copy_dispatches.sql.
SELECT keyed, structure_key, backend, op, dtypes, kernel_source, kernel_revision_hash,
       cc_major, cc_minor, hardware_sku, driver_version, candidates, count, candidates_set_at
FROM dispatch_cell;
