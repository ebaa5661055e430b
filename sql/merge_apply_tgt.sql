-- Apply, step 4: what this store already counts for the staged cells and
-- origins: its live history plus what it pruned of the same key, summed
-- (saturating at 2^63-1).
INSERT INTO temp.merge_tgt (cell, origin, day, count)
SELECT c.id, h.origin, h.day, h.count
FROM temp.merge_cell AS c
JOIN cell_history AS h ON h.cell = c.target
WHERE EXISTS (SELECT 1 FROM temp.merge_src AS s WHERE s.cell = c.id AND s.origin = h.origin)
UNION ALL
SELECT c.id, p.origin, p.day, p.count
FROM temp.merge_cell AS c
JOIN pruned_history AS p ON p.cell = c.tomb
WHERE EXISTS (SELECT 1 FROM temp.merge_src AS s WHERE s.cell = c.id AND s.origin = p.origin)
ORDER BY 1, 2, 3
ON CONFLICT (cell, origin, day) DO UPDATE SET
    count = CASE
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END;
