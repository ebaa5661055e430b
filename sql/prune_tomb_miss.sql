-- fdx-prune: remembers a removed miss cell's key (?1..?10 as miss_upsert.sql
-- numbers them) and its cell id ?11, so that its history is kept as counts
-- already absorbed (see schema_6.sql).
INSERT INTO pruned_cell (kind, keyed, token, backend, op, dtypes, kernel_source,
                         kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version,
                         cell_id)
VALUES ('miss', 1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
ON CONFLICT (kind, keyed, token, kernel_source, kernel_revision_hash, backend, op, dtypes,
             cc_major, cc_minor, hardware_sku, driver_version)
DO UPDATE SET cell_id = excluded.cell_id;
