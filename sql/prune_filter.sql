-- The WHERE clause of prune_misses.sql and prune_dispatches.sql: a cell passes
-- when it passes every filter given (a NULL parameter does not filter).
-- :before keeps a cell observed on that day or later; a month bucket (a row
-- before rolled_before, on its month's first day) counts as observed through
-- the month's last day, so a cell seen in :before's month is kept.
-- Not run alone.
WHERE (:driver IS NULL OR driver_version = :driver)
  AND (:revision IS NULL
       OR printf('%016x', (kernel_revision_hash | -9223372036854775808)
                          & ~(kernel_revision_hash & -9223372036854775808)) = lower(:revision))
  AND (:source IS NULL OR kernel_source = :source)
  AND (:op IS NULL OR op = :op)
  AND (:cc IS NULL
       OR (CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END) = :cc)
  AND (:sku IS NULL OR hardware_sku = :sku)
  AND (:before IS NULL
       OR cell_id NOT IN (SELECT cell FROM cell_history
                          WHERE day >= CAST(strftime('%s', :before) AS INTEGER) / 86400
                             OR (day < (SELECT rolled_before FROM history_config)
                                 AND day >= CAST(strftime('%s', :before, 'start of month')
                                                 AS INTEGER) / 86400)))
