-- The ledger row of the working copy's transaction (?1), as pushed.
SELECT run_id, kind, content_hash, sources, bytes, lines, records, skipped, committed_at,
       captured_at
FROM ingest_ledger WHERE id = ?1;
