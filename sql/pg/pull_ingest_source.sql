-- Reads ingest_source into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT ledger_id, position, path, content_hash, bytes, lines, records, skipped
FROM ingest_source;
