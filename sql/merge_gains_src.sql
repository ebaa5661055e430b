-- A merge's delta, computed in C (store/merge_gains.c): the source's staged
-- history in its primary key's order, so that no sort is needed.
SELECT cell, origin, day, count FROM temp.merge_src ORDER BY cell, origin, day;
