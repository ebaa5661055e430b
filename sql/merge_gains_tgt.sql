-- A merge's delta, computed in C (store/merge_gains.c): this store's counts
-- for the staged cells, in the same order as the source's (merge_gains_src).
SELECT cell, origin, day, count FROM temp.merge_tgt ORDER BY cell, origin, day;
