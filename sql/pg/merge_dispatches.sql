-- Apply, step 9 (../merge_apply_dispatches.sql, which says why): the
-- dispatch cells this store had that gain observations or candidates; the
-- later candidates list wins (by candidates_set_at, then the list that sorts
-- last), an empty one never replaces one. $1 is the ledger id of the push.
UPDATE dispatch_cell AS d SET
    count = least(d.count::numeric + c.gain, 9223372036854775807)::bigint,
    candidates = CASE WHEN c.newer THEN c.candidates ELSE d.candidates END,
    candidates_set_at = CASE WHEN c.newer THEN c.candidates_set_at ELSE d.candidates_set_at END,
    last_ingest = $1::bigint
FROM (SELECT s.target, s.gain, s.candidates, s.candidates_set_at,
             s.candidates <> '[]' AND (t.candidates = '[]' OR
                 (coalesce(s.candidates_set_at, -1), s.candidates) >
                 (coalesce(t.candidates_set_at, -1), t.candidates)) AS newer
      FROM merge_cell AS s
      JOIN dispatch_cell AS t ON t.cell_id = s.target
      WHERE s.kind = 'dispatch' AND s.added = 0) AS c
WHERE d.cell_id = c.target AND (c.gain > 0 OR c.newer);
