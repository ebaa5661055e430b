-- fdx-prune: removes the miss cells that pass every filter given (a NULL
-- parameter does not filter): :driver, :revision (16 hex digits, as the views
-- show it), :source, :op, :cc ('8.9' or 'cpu'), :sku, and :before
-- ('YYYY-MM-DD': cells with no observation on that day or later).
-- Returns each removed cell's key (as the export queries order it), count
-- and id.
DELETE FROM miss_cell
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
RETURNING wanted, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major,
          cc_minor, hardware_sku, driver_version, count, cell_id;
