-- Completes the ledger row of the transaction about to commit; ?12 is its
-- capture time (Unix seconds).
UPDATE ingest_ledger
SET run_id = ?2, kind = ?3, content_hash = ?4, sources = ?5, bytes = ?6, lines = ?7,
    records = ?8, skipped = ?9, cells_added = ?10, cells_updated = ?11,
    captured_at = ?12, committed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE id = ?1;
