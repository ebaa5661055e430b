-- The key columns after the token of a cell c (miss_cell or dispatch_cell)
-- equal to those of a tombstone p (pruned_cell), for merge_read_pruned.sql.
-- Not run alone.
 AND c.kernel_source = p.kernel_source AND c.kernel_revision_hash = p.kernel_revision_hash
 AND c.backend = p.backend AND c.op = p.op AND c.dtypes = p.dtypes
 AND c.cc_major = p.cc_major AND c.cc_minor = p.cc_minor
 AND c.hardware_sku = p.hardware_sku AND c.driver_version = p.driver_version
