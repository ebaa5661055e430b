-- Reads miss_cell into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT wanted, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major,
       cc_minor, hardware_sku, driver_version, count, first_ingest, last_ingest, cell_id
FROM miss_cell;
