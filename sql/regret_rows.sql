-- The body of the dispatch_regret view (views.sql), over dispatch_candidates;
-- shared with report_regret.sql, which cannot trust a store's views. Not run
-- alone.
WITH measured AS (
    SELECT * FROM dispatch_candidates WHERE latency_ns IS NOT NULL
),
chosen AS (
    SELECT structure_key, chosen_backend, chosen_op, chosen_dtypes, chosen_source,
           chosen_revision, cc_major, cc_minor, compute_capability, hardware_sku,
           driver_version, count, min(latency_ns) AS chosen_ns
    FROM measured WHERE is_chosen
    GROUP BY structure_key, chosen_backend, chosen_op, chosen_dtypes, chosen_source,
             chosen_revision, compute_capability, hardware_sku, driver_version
),
best AS (
    SELECT structure_key, chosen_backend, chosen_op, chosen_dtypes, chosen_source,
           chosen_revision, cc_major, cc_minor, compute_capability, hardware_sku,
           driver_version, min(latency_ns) AS best_ns, backend AS best_backend, kernel_source AS best_source,
           kernel_revision AS best_revision
    FROM measured WHERE NOT is_chosen
    GROUP BY structure_key, chosen_backend, chosen_op, chosen_dtypes, chosen_source,
             chosen_revision, compute_capability, hardware_sku, driver_version
)
SELECT c.structure_key, c.chosen_backend, c.chosen_op, c.chosen_dtypes, c.chosen_source,
       c.chosen_revision, c.cc_major, c.cc_minor, c.compute_capability, c.hardware_sku,
       c.driver_version, c.count,
       c.chosen_ns, b.best_ns, b.best_backend, b.best_source, b.best_revision,
       round(CAST(c.chosen_ns AS REAL) / b.best_ns, 3) AS speedup
FROM chosen AS c
JOIN best AS b
  ON b.structure_key IS c.structure_key AND b.chosen_backend = c.chosen_backend
 AND b.chosen_op = c.chosen_op AND b.chosen_dtypes = c.chosen_dtypes
 AND b.chosen_source = c.chosen_source AND b.chosen_revision = c.chosen_revision
 AND b.compute_capability = c.compute_capability AND b.hardware_sku = c.hardware_sku
 AND b.driver_version = c.driver_version
WHERE b.best_ns < c.chosen_ns
ORDER BY speedup DESC, c.structure_key
