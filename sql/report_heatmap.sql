-- fdx-report's heatmap: misses per fallback op and compute capability
-- ('cpu' for a stamp without one), as miss_cells shows them.
SELECT op,
       cc_major,
       cc_minor,
       CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END,
       CAST(total(count) AS INTEGER)
FROM miss_cell
GROUP BY op, cc_major, cc_minor
ORDER BY op, cc_major, cc_minor;
