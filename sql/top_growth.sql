-- The growth ranking (fdx-top --growth): misses per wanted structure key in
-- the :days days before :until ('YYYY-MM-DD', exclusive; NULL: the day after
-- the latest day in the history) against the :days days before those, over
-- the cells that pass the filters of top_demand.sql. is_new: no misses at all
-- before the window. Most grown first; keys with no misses in either window
-- are left out.
WITH w AS (
    SELECT coalesce(CAST(strftime('%s', :until) AS INTEGER) / 86400,
                    (SELECT latest_day + 1 FROM history_config)) - :days AS lo
),
per AS (
    SELECT c.wanted,
           total(CASE WHEN h.day >= w.lo AND h.day < w.lo + :days THEN h.count END) AS recent,
           total(CASE WHEN h.day >= w.lo - :days AND h.day < w.lo THEN h.count END)
               AS previous,
           total(CASE WHEN h.day < w.lo THEN h.count END) AS before,
           group_concat(DISTINCT c.op) AS ops
    FROM miss_cell AS c
    JOIN cell_history AS h ON h.cell = c.cell_id, w
    WHERE h.day < w.lo + :days
      AND (:cc IS NULL
           OR (CASE WHEN c.cc_major < 0 THEN 'cpu' ELSE c.cc_major || '.' || c.cc_minor END)
              = :cc)
      AND (:sku IS NULL OR c.hardware_sku = :sku)
      AND (:op IS NULL OR c.op = :op)
      AND (:source IS NULL OR c.kernel_source = :source)
    GROUP BY c.wanted
)
SELECT wanted,
       CAST(recent AS INTEGER) AS misses,
       CAST(previous AS INTEGER) AS previous,
       CAST(recent AS INTEGER) - CAST(previous AS INTEGER) AS growth,
       before = 0 AS is_new,
       ops
FROM per
WHERE recent > 0 OR previous > 0
ORDER BY growth DESC, misses DESC, wanted
LIMIT :top;
