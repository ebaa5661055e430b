-- Drops the daily history rows of days ?1 ..< ?2 that history_rollup.sql
-- summed into their month's bucket.
DELETE FROM cell_history
WHERE day >= ?1 AND day < ?2
  AND day <> CAST(strftime('%s', day * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400;
