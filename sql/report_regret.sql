-- fdx-report's dispatch regret: the dispatch_regret view's rows, most regret
-- first, computed here from the tables since a store's views are not trusted
-- (the view's own text is included, so the two cannot drift apart). A
-- candidate measured at 0 ns makes the speedup NULL (no ratio), and the most
-- regret of all: its rows come first, where the view puts them last. Each
-- implementation's backend, kernel source and revision come apart, so that
-- no two cells' rows read the same.
WITH dispatch_candidates AS (
-- @include regret_candidates
),
regret AS (
-- @include regret_rows
)
SELECT structure_key, chosen_op, chosen_dtypes, compute_capability, hardware_sku,
       driver_version, chosen_backend, chosen_source, chosen_revision, best_backend,
       best_source, best_revision, chosen_ns, best_ns, speedup, count,
       structure_key IS NULL
FROM regret
ORDER BY speedup IS NULL DESC, speedup DESC, structure_key
LIMIT :top;
