-- Every miss cell of a store being merged (columns as in miss_export.sql,
-- then a NULL in the place of a dispatch cell's candidates_set_at, then its
-- id in the history), in export order: the primary key's, a scan, no sort.
SELECT wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
       cc_major, cc_minor, hardware_sku, driver_version, count, NULL, cell_id
FROM miss_cell
ORDER BY wanted, kernel_source, kernel_revision_hash, backend, op, dtypes, cc_major,
         cc_minor, hardware_sku, driver_version;
