-- fdx-prune: prune_tomb_history.sql and prune_history.sql of the SQLite
-- store in PostgreSQL: adds the history of cells that no longer exist to
-- their tombstones (summed per bucket and origin, saturating at 2^63-1),
-- then drops it.
WITH gone AS (
    DELETE FROM cell_history AS h
    WHERE NOT EXISTS (SELECT 1 FROM miss_cell WHERE cell_id = h.cell)
      AND NOT EXISTS (SELECT 1 FROM dispatch_cell WHERE cell_id = h.cell)
    RETURNING h.cell, h.day, h.origin, h.count
)
INSERT INTO pruned_history AS t (cell, day, origin, count)
SELECT p.id, g.day, g.origin, g.count
FROM gone AS g
JOIN pruned_cell AS p ON p.cell_id = g.cell
ON CONFLICT (cell, origin, day) DO UPDATE SET
    count = CASE
        WHEN t.count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE t.count + excluded.count
    END;
