-- Every miss cell in export order (docs/FORMAT.md, "The export"), which is
-- the primary key's order: a scan, no sort.
SELECT wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
       cc_major, cc_minor, hardware_sku, driver_version, count
FROM miss_cell
ORDER BY wanted, kernel_source, kernel_revision_hash, backend, op, dtypes, cc_major,
         cc_minor, hardware_sku, driver_version;
