-- fdx-report's sparklines: the misses of wanted key :wanted per day of the
-- last 90 days of history ('YYYY-MM-DD'), as miss_daily shows them summed.
-- The key's cells are found first, then their rows of each of those days by
-- the history's key (day, cell): reading every row of the 90 days for each
-- key made the page's cost grow with its number of keys times the history's
-- size. The order is fixed (CROSS JOIN), whatever statistics the store holds.
WITH RECURSIVE days(day) AS (
    SELECT latest_day - 89 FROM history_config WHERE latest_day IS NOT NULL
    UNION ALL
    SELECT day + 1 FROM days WHERE day < (SELECT latest_day FROM history_config)
)
SELECT date(h.day * 86400, 'unixepoch'),
       CASE WHEN sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32) >= 2147483648
            THEN 9223372036854775807
            ELSE ((sum(h.count >> 32) + (sum(h.count & 4294967295) >> 32)) << 32)
                 + (sum(h.count & 4294967295) & 4294967295) END
FROM miss_cell AS c
CROSS JOIN days
CROSS JOIN cell_history AS h ON h.day = days.day AND h.cell = c.cell_id
WHERE c.wanted = :wanted
GROUP BY h.day
ORDER BY h.day;
