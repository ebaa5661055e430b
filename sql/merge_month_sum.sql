-- The saturating sum of count per cell, origin and month, in SQLite (whose
-- sum() fails past 2^63-1): the sm, tm and pm steps of merge_apply_delta.sql.
-- Not run alone.
    SELECT cell, origin, month, CASE WHEN sum(count >> 32) + (sum(count & 4294967295) >> 32) >= 2147483648
                 THEN 9223372036854775807
                 ELSE ((sum(count >> 32) + (sum(count & 4294967295) >> 32)) << 32)
                      + (sum(count & 4294967295) & 4294967295) END AS n
