-- The rows of a merge's delta (merge_apply_delta.sql, pg/merge_delta.sql):
-- each day's gain where the month's days add up to the month's gain, else the
-- month's gain on its first day (the dialect's NULL-safe inequality ends it).
-- pm is joined to md by key, and the unary + keeps SQLite's planner from
-- joining them by their counts instead: few distinct counts made that join
-- quadratic (docs/PERFORMANCE.md). Not run alone.
SELECT pd.cell, pd.origin, pd.day, pd.count
FROM pd
JOIN md ON md.cell = pd.cell AND md.origin = pd.origin AND md.month = pd.month
JOIN pm ON pm.cell = md.cell AND pm.origin = md.origin AND pm.month = md.month
WHERE +pm.n = +md.d
UNION ALL
SELECT md.cell, md.origin, md.month, md.d
FROM md
LEFT JOIN pm ON pm.cell = md.cell AND pm.origin = md.origin AND pm.month = md.month
