-- The miss demand ranking inside a window of days (fdx-top --since/--until):
-- misses per wanted structure key from the history days :since ..< :until
-- ('YYYY-MM-DD'; NULL: open), over the cells that pass the filters of
-- top_demand.sql, most demanded first. A month bucket (history older than the
-- daily window) counts when its first day is inside the window. The history
-- is read first and each row's cell found by its id, whatever statistics
-- (sqlite_stat1) the store holds: a store's crafted ones made SQLite read the
-- whole history again for every cell.
SELECT c.wanted,
       CASE WHEN sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32) >= 2147483648
            THEN 9223372036854775807
            ELSE ((sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32)) << 32)
                 + (sum(h.count & 4294967295) & 4294967295) END AS misses,
       count(DISTINCT json_array(c.backend, c.op, c.dtypes, c.kernel_source,
                                 c.kernel_revision_hash)) AS fallbacks,
       count(DISTINCT json_array(c.cc_major, c.cc_minor, c.hardware_sku, c.driver_version))
           AS devices,
       CASE WHEN max(c.op = '' OR instr(c.op, ',') OR substr(c.op, 1, 1) = '[')
            THEN json_group_array(DISTINCT c.op)
            ELSE group_concat(DISTINCT c.op) END AS ops
FROM cell_history AS h
CROSS JOIN miss_cell AS c ON c.cell_id = h.cell
WHERE (:since IS NULL OR h.day >= CAST(strftime('%s', :since) AS INTEGER) / 86400)
  AND (:until IS NULL OR h.day < CAST(strftime('%s', :until) AS INTEGER) / 86400)
  AND (:cc IS NULL
       OR (CASE WHEN c.cc_major < 0 THEN 'cpu' ELSE c.cc_major || '.' || c.cc_minor END) = :cc)
  AND (:sku IS NULL OR c.hardware_sku = :sku)
  AND (:op IS NULL OR c.op = :op)
  AND (:source IS NULL OR c.kernel_source = :source)
GROUP BY c.wanted
ORDER BY misses DESC, c.wanted
LIMIT :top;
