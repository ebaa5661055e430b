-- The ledger row of run id $1, for a push that found it taken.
SELECT id, coalesce(content_hash, ''), committed_at FROM ingest_ledger WHERE run_id = $1;
