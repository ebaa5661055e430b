-- The miss cells of a PostgreSQL store's working copy: what its transaction
-- adds (the copy starts without cells), in the column order of
-- pg/stage_copy_misses.sql.
SELECT wanted, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major, cc_minor,
       hardware_sku, driver_version, count
FROM miss_cell;
