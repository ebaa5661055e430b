-- The ten miss cells with the most demand: which specialised kernel to write next.
SELECT wanted,
       kernel_source AS fallback,
       compute_capability AS cc,
       hardware_sku,
       count AS misses
FROM miss_cells
ORDER BY count DESC, wanted
LIMIT 10;
