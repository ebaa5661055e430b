-- Reads ingest_ledger into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT id, run_id, kind, content_hash, sources, bytes, lines, records, skipped,
       cells_added, cells_updated, committed_at, captured_at
FROM ingest_ledger;
