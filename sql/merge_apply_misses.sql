-- Apply, steps 8 and 9 for the miss cells that gain (?1: the ledger id of the
-- transaction): a new one is inserted under its new id; one this store has
-- adds the gain (saturating at 2^63-1). One upsert in staged order, which is
-- the key's: each cell is found once, by its key, where an UPDATE ... FROM
-- found it through cell_id and then by its key again.
INSERT INTO miss_cell (wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
                       cc_major, cc_minor, hardware_sku, driver_version, count, first_ingest,
                       last_ingest, cell_id)
SELECT token, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major, cc_minor,
       hardware_sku, driver_version, gain, ?1, ?1, target
FROM temp.merge_cell WHERE kind = 'miss' AND gain > 0
ORDER BY id
ON CONFLICT (wanted, kernel_source, kernel_revision_hash, backend, op, dtypes, cc_major,
             cc_minor, hardware_sku, driver_version) DO UPDATE SET
    count = CASE
        WHEN count < 1 THEN NULL -- an edited store's: fails NOT NULL, not summed
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END,
    last_ingest = excluded.last_ingest;
