-- Completes the ledger row $1 of a push with what the upserts counted.
UPDATE ingest_ledger SET cells_added = $2::bigint, cells_updated = $3::bigint WHERE id = $1::bigint;
