-- Whether step 4 (merge_apply_tgt.sql) can find anything in a store whose
-- history is under the numbers it gave (merge_stray_origins.sql): only when
-- some staged history is under an origin this store numbered before this
-- merge (?1, merge_origin_high.sql) or its own (0). An origin numbered by
-- this merge has no rows here yet.
SELECT EXISTS (SELECT 1 FROM temp.merge_src WHERE origin <= ?1);
