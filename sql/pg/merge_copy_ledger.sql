-- Loads a merge's staged ledger rows (../pgm_rows_ledger.sql's rows).
COPY merge_ledger (store_id, id, run_id, kind, records, cells_added, cells_updated,
                       captured_at, committed_at) FROM STDIN;
