-- Adds one pending dispatch cell. ?13 is the cell's count (1 ..= 2^63-1),
-- saturating at 2^63-1; ?12 (candidates), when not the empty list, replaces
-- the stored list when this transaction set that one (lines in arrival
-- order: the cell last written by it, at its capture time), or else when it
-- was captured later (?15, the transaction's capture
-- time in Unix ms), at the same time when its text is greater: as a merge
-- decides (merge_apply_dispatches.sql), so a backfill with an older capture
-- time leaves a newer list where it is (WIRE.md, section 2).
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
        WHEN count < 1 THEN NULL -- an edited store's: fails NOT NULL, not summed
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END,
    candidates = CASE
        WHEN excluded.candidates <> '[]'
             AND ((last_ingest = excluded.last_ingest
                   AND candidates_set_at = excluded.candidates_set_at)
                  OR (excluded.candidates_set_at, excluded.candidates)
                     > (coalesce(candidates_set_at, -1), candidates))
            THEN excluded.candidates
        ELSE candidates
    END,
    candidates_set_at = CASE
        WHEN excluded.candidates <> '[]'
             AND ((last_ingest = excluded.last_ingest
                   AND candidates_set_at = excluded.candidates_set_at)
                  OR (excluded.candidates_set_at, excluded.candidates)
                     > (coalesce(candidates_set_at, -1), candidates))
            THEN excluded.candidates_set_at
        ELSE candidates_set_at
    END,
    last_ingest = excluded.last_ingest;
