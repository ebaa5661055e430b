-- Apply, step 8: the new dispatch cells (?1: the ledger id of the
-- transaction), with their candidates.
INSERT INTO dispatch_cell (keyed, structure_key, backend, op, dtypes, kernel_source,
                           kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                           driver_version, candidates, count, first_ingest, last_ingest,
                           candidates_set_at, cell_id)
SELECT keyed, token, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major,
       cc_minor, hardware_sku, driver_version, candidates, gain, ?1, ?1, candidates_set_at,
       target
FROM temp.merge_cell WHERE kind = 'dispatch' AND added = 1;
