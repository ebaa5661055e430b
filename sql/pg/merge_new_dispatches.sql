-- Apply, step 8: the new dispatch cells ($1: the ledger id of the push), with
-- their candidates, in key order.
INSERT INTO dispatch_cell (keyed, structure_key, backend, op, dtypes, kernel_source,
                           kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                           driver_version, candidates, count, first_ingest, last_ingest,
                           candidates_set_at, cell_id)
SELECT keyed, token, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major,
       cc_minor, hardware_sku, driver_version, candidates, gain, $1::bigint, $1::bigint,
       candidates_set_at, target
FROM merge_cell WHERE kind = 'dispatch' AND added = 1
ORDER BY keyed, token, kernel_source, kernel_revision_hash, backend, op, dtypes, cc_major,
         cc_minor, hardware_sku, driver_version;
