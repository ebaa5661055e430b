-- Apply, step 10: the gains into the history (saturating at 2^63-1); one row
-- per key (merge_delta's key, each staged cell one target).
INSERT INTO cell_history AS h (cell, day, origin, count)
SELECT c.target, d.day, d.origin, d.delta
FROM merge_delta AS d
JOIN merge_cell AS c ON c.id = d.cell
WHERE c.target IS NOT NULL
ORDER BY d.day, c.target, d.origin
ON CONFLICT (day, cell, origin) DO UPDATE SET
    count = least(h.count::numeric + excluded.count, 9223372036854775807)::bigint;
