-- Adds one pending dispatch cell. ?13 is the cell's count (1 ..= 2^63-1),
-- saturating at 2^63-1; ?12 (candidates) replaces the stored list only when
-- it is not the empty list.
INSERT INTO dispatch_cell (keyed, structure_key, backend, op, dtypes,
                           kernel_source, kernel_revision_hash, cc_major,
                           cc_minor, hardware_sku, driver_version, candidates,
                           count)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
ON CONFLICT (keyed, structure_key, backend, op, dtypes, kernel_source,
             kernel_revision_hash, cc_major, cc_minor, hardware_sku,
             driver_version)
DO UPDATE SET
    count = CASE
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END,
    candidates = CASE
        WHEN excluded.candidates = '[]' THEN candidates
        ELSE excluded.candidates
    END
RETURNING count;
