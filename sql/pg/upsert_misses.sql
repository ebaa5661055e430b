-- Adds the staged miss cells, as miss_upsert.sql does one by one: counts add,
-- saturating at 2^63-1; new cells take their id from fdx_cell_id. $1 is the
-- ledger id of the push. Key order keeps concurrent pushes from deadlocking.
-- Returns how many cells were added and how many updated.
WITH up AS (
    INSERT INTO miss_cell AS m (wanted, backend, op, dtypes, kernel_source,
                                kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                                driver_version, count, first_ingest, last_ingest)
    SELECT wanted, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major,
           cc_minor, hardware_sku, driver_version, count, $1::bigint, $1::bigint
    FROM fdx_stage_miss
    ORDER BY wanted, kernel_source, kernel_revision_hash, backend, op, dtypes, cc_major,
             cc_minor, hardware_sku, driver_version
    ON CONFLICT (wanted, kernel_source, kernel_revision_hash, backend, op, dtypes,
                 cc_major, cc_minor, hardware_sku, driver_version)
    DO UPDATE SET
        count = CASE
            WHEN m.count > 9223372036854775807 - excluded.count THEN 9223372036854775807
            ELSE m.count + excluded.count
        END,
        last_ingest = excluded.last_ingest
    RETURNING (xmax = 0) AS added
)
SELECT count(*) FILTER (WHERE added), count(*) FILTER (WHERE NOT added) FROM up;
