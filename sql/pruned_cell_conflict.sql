-- The tail of an insert of a pruned cell's tombstone (prune_tomb_*.sql,
-- pg/prune_*.sql): a key pruned before keeps one tombstone, with the id the
-- cell had last. Not run alone.
ON CONFLICT (kind, keyed, token, kernel_source, kernel_revision_hash, backend, op, dtypes,
             cc_major, cc_minor, hardware_sku, driver_version)
DO UPDATE SET cell_id = excluded.cell_id
