-- The miss demand ranking (fdx-top): misses per wanted structure key over the
-- cells that pass the filters, most demanded first. A NULL parameter does not
-- filter; :cc is a compute capability such as '8.9', or 'cpu'. The ops are
-- joined with commas, or given as a JSON array when one is empty, holds a
-- comma or begins with '[' (the joined text would read as other ops, or as
-- such an array).
SELECT wanted,
       CASE WHEN sum(count >> 32) + (sum(count & 4294967295) >> 32) >= 2147483648
            THEN 9223372036854775807
            ELSE ((sum(count >> 32) + (sum(count & 4294967295) >> 32)) << 32)
                 + (sum(count & 4294967295) & 4294967295) END AS misses,
       count(DISTINCT json_array(backend, op, dtypes, kernel_source, kernel_revision_hash))
           AS fallbacks,
       count(DISTINCT json_array(cc_major, cc_minor, hardware_sku, driver_version)) AS devices,
       CASE WHEN max(op = '' OR instr(op, ',') OR substr(op, 1, 1) = '[')
            THEN json_group_array(DISTINCT op)
            ELSE group_concat(DISTINCT op) END AS ops
FROM miss_cell
WHERE (:cc IS NULL
       OR (CASE WHEN cc_major < 0 THEN 'cpu' ELSE cc_major || '.' || cc_minor END) = :cc)
  AND (:sku IS NULL OR hardware_sku = :sku)
  AND (:op IS NULL OR op = :op)
  AND (:source IS NULL OR kernel_source = :source)
GROUP BY wanted
ORDER BY misses DESC, wanted
LIMIT :top;
