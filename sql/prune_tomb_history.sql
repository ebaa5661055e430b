-- fdx-prune: before prune_history.sql drops the history of removed cells,
-- adds it to their tombstones (pruned_cell.cell_id names the id they had),
-- summed per bucket and origin with what earlier prunes of the same key kept
-- (saturating at 2^63-1).
INSERT INTO pruned_history (cell, day, origin, count)
SELECT p.id, h.day, h.origin, h.count
FROM cell_history AS h
JOIN pruned_cell AS p ON p.cell_id = h.cell
WHERE h.cell NOT IN (SELECT cell_id FROM miss_cell UNION ALL SELECT cell_id FROM dispatch_cell)
ON CONFLICT (cell, origin, day) DO UPDATE SET
    count = CASE
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END;
