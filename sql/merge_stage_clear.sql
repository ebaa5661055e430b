-- Empties the staging tables of merge_stage_create.sql (before and after
-- each source).
DELETE FROM temp.merge_cell;
DELETE FROM temp.merge_history;
DELETE FROM temp.merge_ledger;
DELETE FROM temp.merge_store;
DELETE FROM temp.merge_src;
DELETE FROM temp.merge_tgt;
DELETE FROM temp.merge_delta;
