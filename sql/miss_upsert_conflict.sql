-- What miss_upsert.sql and miss_upsert_rows.sql do with a cell already stored.
ON CONFLICT (wanted, kernel_source, kernel_revision_hash, backend, op, dtypes,
             cc_major, cc_minor, hardware_sku, driver_version)
DO UPDATE SET
    count = CASE
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END,
    last_ingest = excluded.last_ingest
