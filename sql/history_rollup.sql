-- Rolls the daily history of days ?1 ..< ?2 (?1 and ?2 first days of
-- months) into month buckets keyed by the month's first day; the sum
-- saturates at 2^63-1 (added as two 32-bit halves, which cannot overflow).
-- The bucket replaces the row of the month's first day, whose count the sum
-- holds; history_rollup_clear.sql then drops the other days.
INSERT INTO cell_history (cell, day, origin, count)
SELECT cell, month, origin,
       CASE WHEN hi + (lo >> 32) >= 2147483648 THEN 9223372036854775807
            ELSE ((hi + (lo >> 32)) << 32) + (lo & 4294967295) END
FROM (SELECT cell, origin,
             CAST(strftime('%s', day * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400
                 AS month,
             sum(count >> 32) AS hi, sum(count & 4294967295) AS lo
      FROM cell_history
      WHERE day >= ?1 AND day < ?2
      GROUP BY cell, origin, month)
WHERE true
ON CONFLICT (day, cell, origin) DO UPDATE SET count = excluded.count;
