-- Reads dispatch_cell into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT keyed, structure_key, backend, op, dtypes, kernel_source, kernel_revision_hash,
       cc_major, cc_minor, hardware_sku, driver_version, candidates, count,
       first_ingest, last_ingest, candidates_set_at, cell_id
FROM dispatch_cell;
