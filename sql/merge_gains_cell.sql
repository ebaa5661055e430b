-- A merge's steps 6 and 7, computed in C (store/merge_gains.c): staged cell
-- ?1 gains ?2 observations; when it is new to this store (no target yet), it
-- takes the next cell id ?3 (the caller reads which from the rows changed).
UPDATE temp.merge_cell SET gain = ?2, added = 1, target = ?3
WHERE id = ?1 AND target IS NULL;
