-- Keeps the staged rows of the source just recorded in pgm_source (the
-- latest seq) until the push.
INSERT INTO temp.pgm_cell
SELECT (SELECT max(seq) FROM temp.pgm_source), id, kind, keyed, token, backend, op, dtypes,
       kernel_source, kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version,
       candidates, candidates_set_at
FROM temp.merge_cell;
INSERT INTO temp.pgm_history
SELECT (SELECT max(seq) FROM temp.pgm_source), cell, day, store_id, count
FROM temp.merge_history;
INSERT INTO temp.pgm_ledger
SELECT (SELECT max(seq) FROM temp.pgm_source), store_id, id, run_id, kind, records,
       cells_added, cells_updated, captured_at, committed_at
FROM temp.merge_ledger;
INSERT INTO temp.pgm_store
SELECT (SELECT max(seq) FROM temp.pgm_source), store_id, ledger_high, ledger_digest, how
FROM temp.merge_store;
