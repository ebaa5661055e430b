-- Stages one miss cell of the source as cell ?11 (key columns ?1..?10 as
-- miss_upsert.sql numbers them).
INSERT INTO temp.merge_cell (id, kind, keyed, token, backend, op, dtypes, kernel_source,
                             kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                             driver_version, candidates, candidates_set_at)
VALUES (?11, 'miss', 1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, '[]', NULL);
