-- Adds one pruned_cell row read from a PostgreSQL store to its working copy.
INSERT INTO pruned_cell (id, kind, keyed, token, backend, op, dtypes, kernel_source,
                         kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                         driver_version, cell_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14);
