-- The sources of the working copy's transaction (ledger row ?1), as pushed.
SELECT position, path, content_hash, bytes, lines, records, skipped
FROM ingest_source WHERE ledger_id = ?1 ORDER BY position;
