-- fdx-report's sparklines: the misses of wanted key :wanted per day of the
-- last 90 days of history ('YYYY-MM-DD'), as miss_daily shows them summed.
SELECT date(h.day * 86400, 'unixepoch'), CAST(total(h.count) AS INTEGER)
FROM miss_cell AS c
JOIN cell_history AS h ON h.cell = c.cell_id
WHERE c.wanted = :wanted
  AND h.day > (SELECT latest_day FROM history_config) - 90
GROUP BY h.day
ORDER BY h.day;
