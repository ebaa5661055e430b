-- Adds one merged_store row read from a PostgreSQL store to its working copy.
INSERT INTO merged_store (store_id, ledger_high, source, merged_at, ledger_digest, how)
VALUES (?1, ?2, ?3, ?4, ?5, ?6);
