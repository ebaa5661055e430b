-- Apply, step 5 (../merge_apply_delta.sql, which says why): the gains per
-- staged cell, origin and bucket, compared per month; $1 is the later of the
-- two stores' rolled_before. A day's month is its day less its day of month.
WITH src AS (
    SELECT cell, origin, day, count,
           day - extract(day FROM date '1970-01-01' + day::integer)::bigint + 1 AS month
    FROM merge_src
), tgt AS (
    SELECT cell, origin, count,
           day - extract(day FROM date '1970-01-01' + day::integer)::bigint + 1 AS month
    FROM merge_tgt
), sm AS (
    SELECT cell, origin, month, least(sum(count), 9223372036854775807)::bigint AS n
    FROM src GROUP BY cell, origin, month
), tm AS (
    SELECT cell, origin, month, least(sum(count), 9223372036854775807)::bigint AS n
    FROM tgt GROUP BY cell, origin, month
), md AS (
-- @include merge_delta_month

), pd AS (
    SELECT s.cell, s.origin, s.day, s.month, s.count - coalesce(t.count, 0) AS count
    FROM src AS s
    LEFT JOIN merge_tgt AS t ON t.cell = s.cell AND t.origin = s.origin AND t.day = s.day
    WHERE s.day >= $1::bigint AND s.count > coalesce(t.count, 0)
), pm AS (
    SELECT cell, origin, month, least(sum(count), 9223372036854775807)::bigint AS n
    FROM pd GROUP BY cell, origin, month
)
INSERT INTO merge_delta (cell, origin, day, delta)
-- @include merge_delta_pick

WHERE pm.n IS DISTINCT FROM md.d;
