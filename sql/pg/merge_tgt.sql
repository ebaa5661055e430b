-- Apply, step 4 (../merge_apply_tgt.sql): what this store already counts for
-- the staged cells and origins: its live history plus what it pruned of the
-- same key, summed (saturating at 2^63-1).
INSERT INTO merge_tgt (cell, origin, day, count)
SELECT cell, origin, day, least(sum(count), 9223372036854775807)::bigint
FROM (SELECT c.id AS cell, h.origin, h.day, h.count
      FROM merge_cell AS c
      JOIN cell_history AS h ON h.cell = c.target
      WHERE EXISTS (SELECT 1 FROM merge_src AS s WHERE s.cell = c.id AND s.origin = h.origin)
      UNION ALL
      SELECT c.id, p.origin, p.day, p.count
      FROM merge_cell AS c
      JOIN pruned_history AS p ON p.cell = c.tomb
      WHERE EXISTS (SELECT 1 FROM merge_src AS s WHERE s.cell = c.id AND s.origin = p.origin))
     AS t
GROUP BY cell, origin, day;
