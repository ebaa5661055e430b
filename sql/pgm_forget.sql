-- The push applied the kept merges (or there were none): they are forgotten.
DELETE FROM temp.pgm_source;
DELETE FROM temp.pgm_cell;
DELETE FROM temp.pgm_history;
DELETE FROM temp.pgm_ledger;
DELETE FROM temp.pgm_store;
DELETE FROM temp.pgm_now;
