-- The latest earlier ingest (not the current one, ?2) that read content with
-- this hash.
SELECT s.path, l.id, l.committed_at
FROM ingest_source AS s JOIN ingest_ledger AS l ON l.id = s.ledger_id
WHERE s.content_hash = ?1 AND l.id <> ?2
ORDER BY l.id DESC
LIMIT 1;
