-- fdx-prune: prune_misses.sql of the SQLite store in PostgreSQL: removes the
-- miss cells that pass every filter given (NULL does not filter): $1 driver,
-- $2 revision (16 hex digits, as the views show it), $3 source, $4 op, $5 cc ('8.9' or 'cpu'),
-- $6 sku, $7 before ('YYYY-MM-DD'); remembers each removed key and id in
-- pruned_cell (prune_tomb_miss.sql) and returns the number removed and their
-- counts summed (saturating at 2^63-1).
WITH gone AS (
    DELETE FROM miss_cell
    WHERE ($1::text IS NULL OR driver_version = $1::text)
      AND ($2::text IS NULL OR lpad(to_hex(kernel_revision_hash # -9223372036854775808), 16, '0') = lower($2::text))
      AND ($3::text IS NULL OR kernel_source = $3::text)
      AND ($4::text IS NULL OR op = $4::text)
      AND ($5::text IS NULL
           OR (CASE WHEN cc_major < 0 THEN 'cpu'
                    ELSE cc_major::text || '.' || cc_minor::text END) = $5::text)
      AND ($6::text IS NULL OR hardware_sku = $6::text)
      AND ($7::text IS NULL
           OR NOT EXISTS (SELECT 1 FROM cell_history AS h
                          WHERE h.cell = cell_id
                            AND h.day >= $7::date - date '1970-01-01'))
    RETURNING *
), tomb AS (
    INSERT INTO pruned_cell (kind, keyed, token, backend, op, dtypes, kernel_source,
                             kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                             driver_version, cell_id)
    SELECT 'miss', 1, wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
           cc_major, cc_minor, hardware_sku, driver_version, cell_id
    FROM gone
    ON CONFLICT (kind, keyed, token, kernel_source, kernel_revision_hash, backend, op, dtypes,
                 cc_major, cc_minor, hardware_sku, driver_version)
    DO UPDATE SET cell_id = excluded.cell_id
)
SELECT count(*), least(coalesce(sum(count), 0), 9223372036854775807)::bigint FROM gone;
