-- Apply, steps 8 and 9 for the dispatch cells that gain (?1: the ledger id of
-- the transaction), as merge_apply_misses.sql does for misses: a new one is
-- inserted with its candidates; one this store has adds the gain
-- (saturating) and takes the staged candidates when they win. Of the two
-- lists the later one wins (by candidates_set_at, Unix ms), ties going to
-- the list that sorts last, so the result does not depend on the order or
-- grouping of merges; an empty list never replaces one.
INSERT INTO dispatch_cell (keyed, structure_key, backend, op, dtypes, kernel_source,
                           kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                           driver_version, candidates, count, first_ingest, last_ingest,
                           candidates_set_at, cell_id)
SELECT keyed, token, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major,
       cc_minor, hardware_sku, driver_version, candidates, gain, ?1, ?1, candidates_set_at,
       target
FROM temp.merge_cell WHERE kind = 'dispatch' AND gain > 0
ORDER BY id
ON CONFLICT (keyed, structure_key, kernel_source, kernel_revision_hash, backend, op, dtypes,
             cc_major, cc_minor, hardware_sku, driver_version) DO UPDATE SET
    count = CASE
        WHEN count < 1 THEN NULL -- an edited store's: fails NOT NULL, not summed
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
