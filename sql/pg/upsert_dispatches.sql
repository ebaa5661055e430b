-- Adds the staged dispatch cells, as dispatch_upsert.sql does one by one:
-- counts add, saturating at 2^63-1; a non-empty candidates list replaces the
-- stored one (with its capture time) when captured later, or at the same time
-- with a greater text. Each cell is staged once a push. $1 is the ledger id of the push.
-- Returns how many cells were added and how many updated.
WITH up AS (
    INSERT INTO dispatch_cell AS d (keyed, structure_key, backend, op, dtypes, kernel_source,
                                    kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                                    driver_version, candidates, count, first_ingest,
                                    last_ingest, candidates_set_at)
    SELECT keyed, structure_key, backend, op, dtypes, kernel_source, kernel_revision_hash,
           cc_major, cc_minor, hardware_sku, driver_version, candidates, count, $1::bigint,
           $1::bigint, candidates_set_at
    FROM fdx_stage_dispatch
    ORDER BY keyed, structure_key, kernel_source, kernel_revision_hash, backend, op, dtypes,
             cc_major, cc_minor, hardware_sku, driver_version
    ON CONFLICT (keyed, structure_key, kernel_source, kernel_revision_hash, backend, op,
                 dtypes, cc_major, cc_minor, hardware_sku, driver_version)
    DO UPDATE SET
        count = CASE
            WHEN d.count > 9223372036854775807 - excluded.count THEN 9223372036854775807
            ELSE d.count + excluded.count
        END,
        candidates = CASE
            WHEN excluded.candidates <> '[]'
                 AND (excluded.candidates_set_at, excluded.candidates)
                     > (coalesce(d.candidates_set_at, -1), d.candidates)
                THEN excluded.candidates
            ELSE d.candidates
        END,
        candidates_set_at = CASE
            WHEN excluded.candidates <> '[]'
                 AND (excluded.candidates_set_at, excluded.candidates)
                     > (coalesce(d.candidates_set_at, -1), d.candidates)
                THEN excluded.candidates_set_at
            ELSE d.candidates_set_at
        END,
        last_ingest = excluded.last_ingest
    RETURNING (xmax = 0) AS added
)
SELECT count(*) FILTER (WHERE added), count(*) FILTER (WHERE NOT added) FROM up;
