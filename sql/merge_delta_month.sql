-- The md step of a merge's delta (merge_apply_delta.sql, pg/merge_delta.sql):
-- each month's gain, the source's sum less this store's, when positive. Not
-- run alone.
    SELECT sm.cell, sm.origin, sm.month, sm.n - coalesce(tm.n, 0) AS d
    FROM sm LEFT JOIN tm ON tm.cell = sm.cell AND tm.origin = sm.origin AND tm.month = sm.month
    WHERE sm.n > coalesce(tm.n, 0)
