-- Every dispatch cell in export order (docs/FORMAT.md, "The export"):
-- unkeyed cells first, then by key. It is the primary key's order: a scan, no sort.
SELECT keyed, structure_key, backend, op, dtypes, kernel_source,
       kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version,
       candidates, count
FROM dispatch_cell
ORDER BY keyed, structure_key, kernel_source, kernel_revision_hash, backend, op, dtypes,
         cc_major, cc_minor, hardware_sku, driver_version;
