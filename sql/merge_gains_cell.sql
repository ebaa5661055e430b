-- A merge's steps 6 and 7, computed in C (store/merge_gains.c): staged cell
-- ?1, new to this store (no target yet, as merge_gains_src.sql read), gains
-- ?2 observations and takes the next cell id ?3.
UPDATE temp.merge_cell SET gain = ?2, added = 1, target = ?3
WHERE id = ?1 AND target IS NULL;
