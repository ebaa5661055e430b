-- Apply, step 6: the observations each staged cell gains (saturating). The
-- SQLite target computes it in C with steps 5 and 7 (store/merge_gains.c);
-- this statement is the definition that code is tested against.
UPDATE temp.merge_cell SET gain = coalesce(
    (SELECT CASE WHEN sum(delta >> 32) + (sum(delta & 4294967295) >> 32) >= 2147483648
                 THEN 9223372036854775807
                 ELSE ((sum(delta >> 32) + (sum(delta & 4294967295) >> 32)) << 32)
                      + (sum(delta & 4294967295) & 4294967295) END FROM temp.merge_delta AS d WHERE d.cell = merge_cell.id), 0);
