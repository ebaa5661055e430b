-- The earlier ingest with this run id, if any.
SELECT id, content_hash, committed_at FROM ingest_ledger WHERE run_id = ?1;
