-- The growth ranking (fdx-top --growth): misses per wanted structure key in
-- the :days days before :until ('YYYY-MM-DD', exclusive; NULL: the day after
-- the latest day in the history) against the :days days before those, over
-- the cells that pass the filters of top_demand.sql. is_new: no misses at all
-- before the window. Most grown first; keys with no misses in either window
-- are left out. The sums are exact, saturating at 2^63-1: each is summed in
-- two halves of 32 bits (sum() fails past 2^63-1, total() rounds past 2^53).
-- The history is read first, whatever statistics the store holds (as in
-- top_window.sql).
WITH w AS (
    SELECT coalesce(CAST(strftime('%s', :until) AS INTEGER) / 86400,
                    (SELECT latest_day + 1 FROM history_config)) - :days AS lo
),
per AS (
    SELECT c.wanted,
           sum(CASE WHEN h.day >= w.lo AND h.day < w.lo + :days THEN h.count >> 32 END)
               AS recent_hi,
           sum(CASE WHEN h.day >= w.lo AND h.day < w.lo + :days THEN h.count & 4294967295 END)
               AS recent_lo,
           sum(CASE WHEN h.day >= w.lo - :days AND h.day < w.lo THEN h.count >> 32 END)
               AS previous_hi,
           sum(CASE WHEN h.day >= w.lo - :days AND h.day < w.lo THEN h.count & 4294967295 END)
               AS previous_lo,
           max(CASE WHEN h.day < w.lo THEN h.count END) AS before,
           CASE WHEN max(c.op = '' OR instr(c.op, ',') OR substr(c.op, 1, 1) = '[')
                THEN json_group_array(DISTINCT c.op)
                ELSE group_concat(DISTINCT c.op) END AS ops
    FROM w
    CROSS JOIN cell_history AS h
    CROSS JOIN miss_cell AS c ON c.cell_id = h.cell
    WHERE h.day < w.lo + :days
      AND (:cc IS NULL
           OR (CASE WHEN c.cc_major < 0 THEN 'cpu' ELSE c.cc_major || '.' || c.cc_minor END)
              = :cc)
      AND (:sku IS NULL OR c.hardware_sku = :sku)
      AND (:op IS NULL OR c.op = :op)
      AND (:source IS NULL OR c.kernel_source = :source)
    GROUP BY c.wanted
),
sums AS (
    SELECT wanted,
           coalesce(CASE WHEN recent_hi + (recent_lo >> 32) >= 2147483648
                         THEN 9223372036854775807
                         ELSE ((recent_hi + (recent_lo >> 32)) << 32)
                              + (recent_lo & 4294967295) END, 0) AS recent,
           coalesce(CASE WHEN previous_hi + (previous_lo >> 32) >= 2147483648
                         THEN 9223372036854775807
                         ELSE ((previous_hi + (previous_lo >> 32)) << 32)
                              + (previous_lo & 4294967295) END, 0) AS previous,
           coalesce(before, 0) AS before,
           ops
    FROM per
)
SELECT wanted,
       recent AS misses,
       previous,
       recent - previous AS growth,
       before = 0 AS is_new,
       ops
FROM sums
WHERE recent > 0 OR previous > 0
ORDER BY growth DESC, misses DESC, wanted
LIMIT :top;
