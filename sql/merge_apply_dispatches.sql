-- Apply, step 9: the dispatch cells this store had that gain observations or
-- candidates. Of the two candidates lists the later one wins (by
-- candidates_set_at, Unix ms), ties going to the list that sorts last, so
-- the result does not depend on the order or grouping of merges; an empty
-- list never replaces one. ?1 is the ledger id of the transaction.
UPDATE dispatch_cell SET
    count = CASE
        WHEN dispatch_cell.count > 9223372036854775807 - c.gain THEN 9223372036854775807
        ELSE dispatch_cell.count + c.gain
    END,
    candidates = CASE
        WHEN c.candidates <> '[]' AND (dispatch_cell.candidates = '[]' OR
             (coalesce(c.candidates_set_at, -1), c.candidates) >
             (coalesce(dispatch_cell.candidates_set_at, -1), dispatch_cell.candidates))
        THEN c.candidates ELSE dispatch_cell.candidates
    END,
    candidates_set_at = CASE
        WHEN c.candidates <> '[]' AND (dispatch_cell.candidates = '[]' OR
             (coalesce(c.candidates_set_at, -1), c.candidates) >
             (coalesce(dispatch_cell.candidates_set_at, -1), dispatch_cell.candidates))
        THEN c.candidates_set_at ELSE dispatch_cell.candidates_set_at
    END,
    last_ingest = ?1
FROM temp.merge_cell AS c
WHERE c.kind = 'dispatch' AND c.added = 0 AND dispatch_cell.cell_id = c.target
  AND (c.gain > 0 OR
       (c.candidates <> '[]' AND (dispatch_cell.candidates = '[]' OR
        (coalesce(c.candidates_set_at, -1), c.candidates) >
        (coalesce(dispatch_cell.candidates_set_at, -1), dispatch_cell.candidates))));
