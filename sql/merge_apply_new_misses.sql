-- Apply, step 8: the new miss cells (?1: the ledger id of the transaction).
INSERT INTO miss_cell (wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
                       cc_major, cc_minor, hardware_sku, driver_version, count, first_ingest,
                       last_ingest, cell_id)
SELECT token, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major, cc_minor,
       hardware_sku, driver_version, gain, ?1, ?1, target
FROM temp.merge_cell WHERE kind = 'miss' AND added = 1;
