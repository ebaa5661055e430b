-- The ten miss cells with the most demand: which specialised kernel to write next.
SELECT wanted,
       kernel_source AS fallback,
       CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END AS cc,
       hardware_sku,
       count AS misses
FROM miss_cell
ORDER BY count DESC, wanted
LIMIT 10;
