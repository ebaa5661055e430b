-- Loads a merge's staged stores (../pgm_rows_store.sql's rows).
COPY merge_store (store_id, ledger_high, ledger_digest, how) FROM STDIN;
