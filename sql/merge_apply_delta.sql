-- Apply, step 5: what the source brings, per staged cell, origin and bucket.
-- The SQLite target computes it in C with steps 6 and 7
-- (store/merge_gains.c), reading the two sides once in key order instead of
-- sorting and joining per-month sums; this statement is the definition that
-- code is tested against (tests/test_merge_stage.c), and what PostgreSQL's
-- pg/merge_delta.sql says in its dialect.
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
-- @include merge_month_sum

    FROM src GROUP BY cell, origin, month
), tm AS (
-- @include merge_month_sum

    FROM tgt GROUP BY cell, origin, month
), md AS (
-- @include merge_delta_month

), pd AS (
    SELECT s.cell, s.origin, s.day, s.month, s.count - coalesce(t.count, 0) AS count
    FROM src AS s
    LEFT JOIN temp.merge_tgt AS t ON t.cell = s.cell AND t.origin = s.origin AND t.day = s.day
    WHERE s.day >= ?1 AND s.count > coalesce(t.count, 0)
), pm AS (
-- @include merge_month_sum

    FROM pd GROUP BY cell, origin, month
)
INSERT INTO temp.merge_delta (cell, origin, day, delta)
-- @include merge_delta_pick

WHERE pm.n IS NOT md.d;
