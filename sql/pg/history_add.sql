-- The staged cells' observations on the push's day, bucket $1 (the day, or
-- its month's first day before the daily window), origin 0; counts add,
-- saturating at 2^63-1, as history_add.sql.
INSERT INTO cell_history AS h (cell, day, origin, count)
SELECT c.cell_id, $1::bigint, 0, s.count
FROM fdx_stage_miss AS s
JOIN miss_cell AS c USING (wanted, kernel_source, kernel_revision_hash, backend, op, dtypes,
                           cc_major, cc_minor, hardware_sku, driver_version)
UNION ALL
SELECT c.cell_id, $1::bigint, 0, s.count
FROM fdx_stage_dispatch AS s
JOIN dispatch_cell AS c USING (keyed, structure_key, kernel_source, kernel_revision_hash,
                               backend, op, dtypes, cc_major, cc_minor, hardware_sku,
                               driver_version)
ORDER BY 1
ON CONFLICT (day, cell, origin) DO UPDATE SET
    count = CASE
        WHEN h.count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE h.count + excluded.count
    END;
