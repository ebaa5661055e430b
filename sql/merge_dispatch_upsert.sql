-- Folds one dispatch cell of another store into this one (fdx-merge). Counts
-- add, saturating at 2^63-1. Of the two candidates lists the later one wins
-- (?15, the source's candidates_set_at in Unix ms), ties going to the list
-- that sorts last, so merging gives the same result in any order or grouping.
-- An empty list never replaces one. ?14 is the ledger id of the transaction.
-- ?16 is the cell's id: the stored one (cell_id.sql) or, for a new cell, the next.
INSERT INTO dispatch_cell (keyed, structure_key, backend, op, dtypes,
                           kernel_source, kernel_revision_hash, cc_major,
                           cc_minor, hardware_sku, driver_version, candidates,
                           count, first_ingest, last_ingest, candidates_set_at, cell_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14, ?15, ?16)
ON CONFLICT (keyed, structure_key, kernel_source, kernel_revision_hash, backend, op,
             dtypes, cc_major, cc_minor, hardware_sku, driver_version)
DO UPDATE SET
    count = CASE
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END,
    candidates = CASE
        WHEN excluded.candidates <> '[]' AND (candidates = '[]' OR
             (coalesce(excluded.candidates_set_at, -1), excluded.candidates) >
             (coalesce(candidates_set_at, -1), candidates))
        THEN excluded.candidates ELSE candidates
    END,
    candidates_set_at = CASE
        WHEN excluded.candidates <> '[]' AND (candidates = '[]' OR
             (coalesce(excluded.candidates_set_at, -1), excluded.candidates) >
             (coalesce(candidates_set_at, -1), candidates))
        THEN excluded.candidates_set_at ELSE candidates_set_at
    END,
    last_ingest = excluded.last_ingest;
