-- Apply, step 8: the new miss cells ($1: the ledger id of the push), in key
-- order.
INSERT INTO miss_cell (wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
                       cc_major, cc_minor, hardware_sku, driver_version, count, first_ingest,
                       last_ingest, cell_id)
SELECT token, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major, cc_minor,
       hardware_sku, driver_version, gain, $1::bigint, $1::bigint, target
FROM merge_cell WHERE kind = 'miss' AND added = 1
ORDER BY token, kernel_source, kernel_revision_hash, backend, op, dtypes, cc_major, cc_minor,
         hardware_sku, driver_version;
