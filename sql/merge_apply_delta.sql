-- Apply, step 5: what the source brings, per staged cell, origin and bucket.
-- Each (cell, origin, bucket) count is a grow-only counter and a merge keeps
-- the larger of the two: the gain is the source's count less this store's,
-- when positive. Compared per month (both sides summed by the month's first
-- day, saturating), so that a side with month buckets (before its
-- rolled_before) meets the other's days. ?1 is the later of the two stores'
-- rolled_before: from it on both sides are daily, and when the gains of the
-- month's days add up to the month's gain they go to their days; otherwise
-- (before ?1, or when the days disagree with the month) the month's gain goes
-- to the month's first day.
WITH src AS (
    SELECT cell, origin, day, count,
           CAST(strftime('%s', day * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400
               AS month
    FROM temp.merge_src
), tgt AS (
    SELECT cell, origin, count,
           CAST(strftime('%s', day * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400
               AS month
    FROM temp.merge_tgt
), sm AS (
    SELECT cell, origin, month, CASE WHEN sum(count >> 32) + (sum(count & 4294967295) >> 32) >= 2147483648
                 THEN 9223372036854775807
                 ELSE ((sum(count >> 32) + (sum(count & 4294967295) >> 32)) << 32)
                      + (sum(count & 4294967295) & 4294967295) END AS n
    FROM src GROUP BY cell, origin, month
), tm AS (
    SELECT cell, origin, month, CASE WHEN sum(count >> 32) + (sum(count & 4294967295) >> 32) >= 2147483648
                 THEN 9223372036854775807
                 ELSE ((sum(count >> 32) + (sum(count & 4294967295) >> 32)) << 32)
                      + (sum(count & 4294967295) & 4294967295) END AS n
    FROM tgt GROUP BY cell, origin, month
), md AS (
    SELECT sm.cell, sm.origin, sm.month, sm.n - coalesce(tm.n, 0) AS d
    FROM sm LEFT JOIN tm ON tm.cell = sm.cell AND tm.origin = sm.origin AND tm.month = sm.month
    WHERE sm.n > coalesce(tm.n, 0)
), pd AS (
    SELECT s.cell, s.origin, s.day, s.month, s.count - coalesce(t.count, 0) AS d
    FROM src AS s
    LEFT JOIN temp.merge_tgt AS t ON t.cell = s.cell AND t.origin = s.origin AND t.day = s.day
    WHERE s.day >= ?1 AND s.count > coalesce(t.count, 0)
), pm AS (
    SELECT cell, origin, month, CASE WHEN sum(d >> 32) + (sum(d & 4294967295) >> 32) >= 2147483648
                 THEN 9223372036854775807
                 ELSE ((sum(d >> 32) + (sum(d & 4294967295) >> 32)) << 32)
                      + (sum(d & 4294967295) & 4294967295) END AS n
    FROM pd GROUP BY cell, origin, month
)
INSERT INTO temp.merge_delta (cell, origin, day, delta)
SELECT pd.cell, pd.origin, pd.day, pd.d
FROM pd
JOIN md ON md.cell = pd.cell AND md.origin = pd.origin AND md.month = pd.month
JOIN pm ON pm.cell = pd.cell AND pm.origin = pd.origin AND pm.month = pd.month
WHERE pm.n = md.d
UNION ALL
SELECT md.cell, md.origin, md.month, md.d
FROM md
LEFT JOIN pm ON pm.cell = md.cell AND pm.origin = md.origin AND pm.month = md.month
WHERE pm.n IS NOT md.d;
