-- Apply, step 3: the staged history under this store's origin numbers (its
-- own identity is origin 0).
INSERT INTO temp.merge_src (cell, origin, day, count)
SELECT h.cell,
       CASE WHEN h.store_id = (SELECT id FROM store_identity) THEN 0
            ELSE (SELECT id FROM history_origin AS o WHERE o.store_id = h.store_id) END,
       h.day, h.count
FROM temp.merge_history AS h
WHERE true
ON CONFLICT (cell, origin, day) DO UPDATE SET count = max(count, excluded.count);
