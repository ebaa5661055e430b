-- Adds one pending dispatch cell. ?13 is the cell's count (1 ..= 2^63-1),
-- saturating at 2^63-1; ?12 (candidates) replaces the stored list only when
-- it is not the empty list, and ?15 (Unix ms) records when that happened.
-- ?14 is the ledger id of the transaction.
-- ?16 is the cell's id: the stored one (cell_id.sql) or, for a new cell, the next.
INSERT INTO dispatch_cell (keyed, structure_key, backend, op, dtypes,
                           kernel_source, kernel_revision_hash, cc_major,
                           cc_minor, hardware_sku, driver_version, candidates,
                           count, first_ingest, last_ingest, candidates_set_at, cell_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14,
        CASE WHEN ?12 = '[]' THEN NULL ELSE ?15 END, ?16)
ON CONFLICT (keyed, structure_key, kernel_source, kernel_revision_hash, backend, op,
             dtypes, cc_major, cc_minor, hardware_sku, driver_version)
DO UPDATE SET
    count = CASE
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END,
    candidates = CASE
        WHEN excluded.candidates = '[]' THEN candidates
        ELSE excluded.candidates
    END,
    candidates_set_at = CASE
        WHEN excluded.candidates = '[]' THEN candidates_set_at
        ELSE excluded.candidates_set_at
    END,
    last_ingest = excluded.last_ingest;
