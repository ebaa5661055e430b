-- Apply, step 6: the observations each staged cell gains (saturating).
UPDATE merge_cell AS c SET gain = g.n
FROM (SELECT cell, least(sum(delta), 9223372036854775807)::bigint AS n FROM merge_delta GROUP BY cell) AS g
WHERE g.cell = c.id;
