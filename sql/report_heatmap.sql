-- fdx-report's heatmap: misses per fallback op and compute capability
-- ('cpu' for a stamp without one), as miss_cells shows them.
SELECT op,
       cc_major,
       cc_minor,
       CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END,
       CASE WHEN sum(count >> 32) + (sum(count & 4294967295) >> 32) >= 2147483648
            THEN 9223372036854775807
            ELSE ((sum(count >> 32) + (sum(count & 4294967295) >> 32)) << 32)
                 + (sum(count & 4294967295) & 4294967295) END
FROM miss_cell
GROUP BY op, cc_major, cc_minor
ORDER BY op, cc_major, cc_minor;
