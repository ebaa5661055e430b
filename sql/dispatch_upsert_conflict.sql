-- What dispatch_upsert.sql and dispatch_upsert_rows.sql do with a cell already stored.
ON CONFLICT (keyed, structure_key, kernel_source, kernel_revision_hash, backend, op,
             dtypes, cc_major, cc_minor, hardware_sku, driver_version)
DO UPDATE SET
    count = CASE
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END,
    candidates = CASE
        WHEN excluded.candidates = '[]' THEN candidates
        ELSE excluded.candidates
    END,
    candidates_set_at = CASE
        WHEN excluded.candidates = '[]' THEN candidates_set_at
        ELSE excluded.candidates_set_at
    END,
    last_ingest = excluded.last_ingest
