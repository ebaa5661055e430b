-- Every miss cell of a store being merged (columns as in miss_export.sql).
SELECT wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
       cc_major, cc_minor, hardware_sku, driver_version, count
FROM miss_cell;
