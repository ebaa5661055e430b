-- Adds one ingest_ledger row read from a PostgreSQL store to its working copy.
INSERT INTO ingest_ledger (id, run_id, kind, content_hash, sources, bytes, lines,
                          records, skipped, cells_added, cells_updated, committed_at,
                          captured_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13);
