-- Rolls the daily history of days $1 ..< $2 (first days of months) into month
-- buckets keyed by the month's first day, as history_rollup.sql; the sum is
-- numeric, capped at 2^63-1. history_rollup_clear.sql then drops the days.
INSERT INTO cell_history AS h (cell, day, origin, count)
SELECT cell, month, origin, least(sum(count), 9223372036854775807)::bigint
FROM (SELECT cell, origin, count,
             (date_trunc('month', date '1970-01-01' + day::integer)::date
              - date '1970-01-01')::bigint AS month
      FROM cell_history
      WHERE day >= $1::bigint AND day < $2::bigint) AS d
GROUP BY cell, origin, month
ON CONFLICT (day, cell, origin) DO UPDATE SET count = excluded.count;
