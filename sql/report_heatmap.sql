-- fdx-report's heatmap: misses per fallback op and compute capability
-- ('cpu' for a stamp without one), as miss_cells shows them, summed exactly
-- (saturating at 2^63-1), for the ops with the most misses (:top of them, at
-- most 100) and, of their cells, the 24 compute capabilities with the most
-- misses; each row also
-- says how many ops and compute capabilities there are in all, so that the
-- page can say what it leaves out. Rows in op order, then capability order.
WITH per AS (
    SELECT op,
           cc_major,
           cc_minor,
           CASE WHEN sum(count >> 32) + (sum(count & 4294967295) >> 32) >= 2147483648
                THEN 9223372036854775807
                ELSE ((sum(count >> 32) + (sum(count & 4294967295) >> 32)) << 32)
                     + (sum(count & 4294967295) & 4294967295) END AS misses,
           total(count) AS weight
    FROM miss_cell
    GROUP BY op, cc_major, cc_minor
),
top_ops AS (
    SELECT op FROM per GROUP BY op ORDER BY total(weight) DESC, op LIMIT min(:top, 100)
),
top_ccs AS (
    SELECT cc_major, cc_minor FROM per WHERE op IN (SELECT op FROM top_ops)
    GROUP BY cc_major, cc_minor ORDER BY total(weight) DESC, cc_major, cc_minor LIMIT 24
)
SELECT op,
       cc_major,
       cc_minor,
       CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END,
       misses,
       (SELECT count(DISTINCT op) FROM per),
       (SELECT count(*) FROM (SELECT DISTINCT cc_major, cc_minor FROM per))
FROM per
WHERE op IN (SELECT op FROM top_ops)
  AND (cc_major, cc_minor) IN (SELECT cc_major, cc_minor FROM top_ccs)
ORDER BY op, cc_major, cc_minor;
