-- A merge's step 6, computed in C (store/merge_gains.c), for a staged cell ?1
-- this store has (step 2 found its target): it gains ?2.
UPDATE temp.merge_cell SET gain = ?2 WHERE id = ?1;
