-- Stages one dispatch cell of the source as cell ?14 (key columns ?1..?11 as
-- dispatch_upsert.sql numbers them, ?12 its candidates, ?13 when they were
-- set, Unix ms, or NULL).
INSERT INTO temp.merge_cell (id, kind, keyed, token, backend, op, dtypes, kernel_source,
                             kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                             driver_version, candidates, candidates_set_at)
VALUES (?14, 'dispatch', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13);
