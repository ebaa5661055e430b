-- The body of the dispatch_regret view (views.sql), over dispatch_candidates;
-- shared with report_regret.sql, which cannot trust a store's views. Not run
-- alone.
WITH measured AS (
    SELECT * FROM dispatch_candidates WHERE latency_ns IS NOT NULL
),
-- Each cell by its id: two cells whose dtypes join to the same text
-- ('F16,F32' from ["F16,F32"] and from ["F16","F32"]) are two cells.
chosen AS (
    SELECT cell_id, structure_key, chosen_backend, chosen_op, chosen_dtypes, chosen_source,
           chosen_revision, cc_major, cc_minor, compute_capability, hardware_sku,
           driver_version, count, min(latency_ns) AS chosen_ns
    FROM measured WHERE is_chosen
    GROUP BY cell_id
),
best AS (
    SELECT cell_id, min(latency_ns) AS best_ns, backend AS best_backend,
           kernel_source AS best_source, kernel_revision AS best_revision
    FROM measured WHERE NOT is_chosen
    GROUP BY cell_id
)
SELECT c.structure_key, c.chosen_backend, c.chosen_op, c.chosen_dtypes, c.chosen_source,
       c.chosen_revision, c.cc_major, c.cc_minor, c.compute_capability, c.hardware_sku,
       c.driver_version, c.count,
       c.chosen_ns, b.best_ns, b.best_backend, b.best_source, b.best_revision,
       round(CAST(c.chosen_ns AS REAL) / b.best_ns, 3) AS speedup
FROM chosen AS c
JOIN best AS b ON b.cell_id = c.cell_id
WHERE b.best_ns < c.chosen_ns
ORDER BY speedup DESC, c.structure_key
