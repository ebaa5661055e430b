-- Adds one ingest_source row read from a PostgreSQL store to its working copy.
INSERT INTO ingest_source (ledger_id, position, path, content_hash, bytes, lines,
                          records, skipped)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);
