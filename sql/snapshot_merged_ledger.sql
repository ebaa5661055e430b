-- Adds one merged_ledger row read from a PostgreSQL store to its working copy.
INSERT INTO merged_ledger (store_id, id, run_id, kind, records, cells_added,
                          cells_updated, captured_at, committed_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9);
