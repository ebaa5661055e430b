-- The WHERE clause of pg/prune_misses.sql and pg/prune_dispatches.sql: a cell
-- passes when it passes every filter given (NULL does not filter). Not run
-- alone. A month bucket counts as observed through the month's last day, as
-- in prune_filter.sql.
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
                            AND (h.day >= $7::date - date '1970-01-01'
                                 OR (h.day < (SELECT rolled_before FROM history_config)
                                     AND h.day >= date_trunc('month', $7::date)::date
                                                  - date '1970-01-01'))))
