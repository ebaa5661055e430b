-- The head of an insert of a pruned cell's tombstone (prune_tomb_*.sql,
-- pg/prune_*.sql): its columns. Not run alone.
INSERT INTO pruned_cell (kind, keyed, token, backend, op, dtypes, kernel_source,
                         kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version,
                         cell_id)
