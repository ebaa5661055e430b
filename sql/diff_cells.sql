-- fdx-diff: every cell whose count differs between this store (before) and
-- the attached one (after), decoded as the views decode it, the largest
-- change first. A cell missing from a store counts 0 there. The key columns
-- are compared as stored, so a CPU stamp (-1, -1) and an unkeyed dispatch
-- ('' with keyed = 0) pair up like any other value. dtypes are joined with
-- commas, or, when one is empty, holds a comma or begins with '[' (the joined
-- text would read as another list, or as such an array), given as the stored
-- JSON array.
WITH cells AS (
    SELECT 'miss' AS kind, 1 AS keyed, wanted AS key, backend, op, dtypes, kernel_source,
           kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version,
           count AS before, 0 AS after
    FROM main.miss_cell
    UNION ALL
    SELECT 'miss', 1, wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
           cc_major, cc_minor, hardware_sku, driver_version, 0, count
    FROM fdx_other.miss_cell
    UNION ALL
    SELECT 'dispatch', keyed, structure_key, backend, op, dtypes, kernel_source,
           kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version, count, 0
    FROM main.dispatch_cell
    UNION ALL
    SELECT 'dispatch', keyed, structure_key, backend, op, dtypes, kernel_source,
           kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version, 0, count
    FROM fdx_other.dispatch_cell
),
paired AS (
    SELECT kind, keyed, key, backend, op, dtypes, kernel_source, kernel_revision_hash,
           cc_major, cc_minor, hardware_sku, driver_version,
           max(before) AS before, max(after) AS after
    FROM cells
    GROUP BY kind, keyed, key, backend, op, dtypes, kernel_source, kernel_revision_hash,
             cc_major, cc_minor, hardware_sku, driver_version
)
SELECT kind,
       CASE WHEN keyed THEN key END AS key,
       backend,
       op,
       CASE WHEN EXISTS (SELECT 1 FROM json_each(p.dtypes)
                         WHERE value = '' OR instr(value, ',')
                            OR substr(value, 1, 1) = '[')
            THEN p.dtypes
            ELSE coalesce((SELECT group_concat(value, ',') FROM json_each(p.dtypes)), '')
       END AS dtypes,
       kernel_source,
       printf('%016x', (kernel_revision_hash | -9223372036854775808)
                       & ~(kernel_revision_hash & -9223372036854775808)) AS kernel_revision,
       CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END
           AS compute_capability,
       hardware_sku,
       driver_version,
       before,
       after,
       after - before AS change
FROM paired AS p
WHERE before <> after
ORDER BY abs(after - before) DESC, kind DESC, key, kernel_source, kernel_revision_hash,
         backend, op, dtypes, cc_major, cc_minor, hardware_sku, driver_version;
