-- Opens the ledger row of the current write transaction; ledger_update.sql
-- fills it in at commit.
INSERT INTO ingest_ledger (kind, sources, bytes, lines, records, skipped, cells_added,
                           cells_updated, committed_at)
VALUES ('records', 0, 0, 0, 0, 0, 0, 0, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
