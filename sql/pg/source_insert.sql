-- One source of a push's ledger row.
INSERT INTO ingest_source (ledger_id, position, path, content_hash, bytes, lines, records,
                           skipped)
VALUES ($1::bigint, $2::bigint, $3, $4, $5::bigint, $6::bigint, $7::bigint, $8::bigint);
