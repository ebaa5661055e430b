-- Apply, step 9 for the dispatch cells this store has that gain nothing but
-- bring candidates that win (as in merge_apply_dispatches.sql). ?1 is the
-- ledger id of the transaction.
UPDATE dispatch_cell SET
    candidates = c.candidates,
    candidates_set_at = c.candidates_set_at,
    last_ingest = ?1
FROM temp.merge_cell AS c
WHERE c.kind = 'dispatch' AND c.gain = 0 AND dispatch_cell.cell_id = c.target
  AND c.candidates <> '[]' AND (dispatch_cell.candidates = '[]' OR
      (coalesce(c.candidates_set_at, -1), c.candidates) >
      (coalesce(dispatch_cell.candidates_set_at, -1), dispatch_cell.candidates));
