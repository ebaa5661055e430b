-- The WHERE clause of prune_misses.sql and prune_dispatches.sql: a cell passes
-- when it passes every filter given (a NULL parameter does not filter).
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
                          WHERE day >= CAST(strftime('%s', :before) AS INTEGER) / 86400))
