-- Apply, step 3 (../merge_apply_src.sql): the staged history under this
-- store's origin numbers (its own identity is origin 0).
INSERT INTO merge_src (cell, origin, day, count)
SELECT h.cell, CASE WHEN h.store_id = i.id THEN 0 ELSE o.id END, h.day, max(h.count)
FROM merge_history AS h
CROSS JOIN store_identity AS i
LEFT JOIN history_origin AS o ON o.store_id = h.store_id
GROUP BY 1, 2, 3;
