-- Whether this store holds history under an origin number above every one it
-- has given (?1, merge_origin_high.sql): rows fdx never writes, in a damaged
-- or hand-edited store. A number the merge gives next may then have rows
-- already, so step 4 (merge_apply_tgt.sql) is not left out.
SELECT EXISTS (SELECT 1 FROM cell_history WHERE origin > ?1)
    OR EXISTS (SELECT 1 FROM pruned_history WHERE origin > ?1);
