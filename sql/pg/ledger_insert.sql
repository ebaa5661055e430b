-- The ledger row of a push. A run id already in the ledger (another writer
-- committed it, perhaps just now) inserts nothing and returns no row.
INSERT INTO ingest_ledger (run_id, kind, content_hash, sources, bytes, lines, records, skipped,
                           cells_added, cells_updated, committed_at, captured_at)
VALUES ($1, $2, $3, $4::bigint, $5::bigint, $6::bigint, $7::bigint, $8::bigint, 0, 0,
        to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        $9::bigint)
ON CONFLICT (run_id) DO NOTHING
RETURNING id;
