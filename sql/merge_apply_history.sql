-- Apply, step 10: the gains into the history (saturating at 2^63-1).
INSERT INTO cell_history (cell, day, origin, count)
SELECT c.target, d.day, d.origin, d.delta
FROM temp.merge_delta AS d
JOIN temp.merge_cell AS c ON c.id = d.cell
WHERE c.target IS NOT NULL
ON CONFLICT (day, cell, origin) DO UPDATE SET
    count = CASE
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END;
