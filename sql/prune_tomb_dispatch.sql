-- fdx-prune: as prune_tomb_miss.sql for a dispatch cell (?1..?11 as
-- dispatch_upsert.sql numbers them, ?12 its cell id).
INSERT INTO pruned_cell (kind, keyed, token, backend, op, dtypes, kernel_source,
                         kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version,
                         cell_id)
VALUES ('dispatch', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
ON CONFLICT (kind, keyed, token, kernel_source, kernel_revision_hash, backend, op, dtypes,
             cc_major, cc_minor, hardware_sku, driver_version)
DO UPDATE SET cell_id = excluded.cell_id;
