-- fdx-report's sparklines: the misses of each wanted key in :keys (a JSON
-- array of the growth ranking's keys) per day of the last 90 days of history
-- ('YYYY-MM-DD'), as miss_daily shows them summed, by key, then day. One pass
-- over those days' rows for all the keys: a query for each key read them all
-- for each (fdx-report -n 1000 over 40,000 cells took 139 s), and one that
-- found each key's cells first read 90 rows of the history's key for each
-- cell (a key of many idle cells took seconds). The history is read first and
-- each row's cell found by its id, whatever statistics the store holds
-- (CROSS JOIN, as in top_window.sql).
SELECT c.wanted,
       date(h.day * 86400, 'unixepoch'),
       CASE WHEN sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32) >= 2147483648
            THEN 9223372036854775807
            ELSE ((sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32)) << 32)
                 + (sum(h.count & 4294967295) & 4294967295) END
FROM cell_history AS h
CROSS JOIN miss_cell AS c ON c.cell_id = h.cell
WHERE h.day > (SELECT latest_day FROM history_config) - 90
  AND +c.wanted IN (SELECT value FROM json_each(:keys))
GROUP BY c.wanted, h.day
ORDER BY c.wanted, h.day;
