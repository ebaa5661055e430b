-- fdx-report's sparklines: the misses of wanted key :wanted per day of the
-- last 90 days of history ('YYYY-MM-DD'), as miss_daily shows them summed.
SELECT date(h.day * 86400, 'unixepoch'),
       CASE WHEN sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32) >= 2147483648
            THEN 9223372036854775807
            ELSE ((sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32)) << 32)
                 + (sum(h.count & 4294967295) & 4294967295) END
FROM miss_cell AS c
JOIN cell_history AS h ON h.cell = c.cell_id
WHERE c.wanted = :wanted
  AND h.day > (SELECT latest_day FROM history_config) - 90
GROUP BY h.day
ORDER BY h.day;
