-- fdx-prune: prune_misses.sql of the SQLite store in PostgreSQL: removes the
-- miss cells that pass every filter given (NULL does not filter): $1 driver,
-- $2 revision (16 hex digits, as the views show it), $3 source, $4 op, $5 cc ('8.9' or 'cpu'),
-- $6 sku, $7 before ('YYYY-MM-DD'); remembers each removed key and id in
-- pruned_cell (prune_tomb_miss.sql) and returns the number removed and their
-- counts summed (saturating at 2^63-1).
WITH gone AS (
    DELETE FROM miss_cell
-- @include pg/prune_filter

    RETURNING *
), tomb AS (
-- @include pruned_cell_insert

    SELECT 'miss', 1, wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
           cc_major, cc_minor, hardware_sku, driver_version, cell_id
    FROM gone
-- @include pruned_cell_conflict

)
SELECT count(*), least(coalesce(sum(count), 0), 9223372036854775807)::bigint FROM gone;
