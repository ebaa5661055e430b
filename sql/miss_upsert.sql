-- Adds one pending miss cell. ?11 is the cell's count (1 ..= 2^63-1); the sum
-- saturates at 2^63-1 instead of overflowing into a REAL. ?12 is the ledger id
-- of the transaction.
-- ?13 is the cell's id: the stored one (cell_id.sql) or, for a new cell, the next.
INSERT INTO miss_cell (wanted, backend, op, dtypes, kernel_source,
                       kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                       driver_version, count, first_ingest, last_ingest, cell_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, ?13)
ON CONFLICT (wanted, kernel_source, kernel_revision_hash, backend, op, dtypes,
             cc_major, cc_minor, hardware_sku, driver_version)
DO UPDATE SET
    count = CASE
        WHEN count < 1 THEN NULL -- an edited store's: fails NOT NULL, not summed
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END,
    last_ingest = excluded.last_ingest;
