-- Every ledger row up to ?1, in order: what a store's ledger digest covers.
SELECT id, run_id, kind, content_hash, sources, bytes, lines, records, skipped,
       cells_added, cells_updated, committed_at
FROM ingest_ledger WHERE id <= ?1 ORDER BY id;
