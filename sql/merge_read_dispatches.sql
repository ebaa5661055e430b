-- Every dispatch cell of a store being merged (columns as in
-- dispatch_export.sql, then when its candidates were set, then its id in the
-- history), in export order: the primary key's, a scan, no sort.
SELECT keyed, structure_key, backend, op, dtypes, kernel_source,
       kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version,
       candidates, count, candidates_set_at, cell_id
FROM dispatch_cell
ORDER BY keyed, structure_key, kernel_source, kernel_revision_hash, backend, op, dtypes,
         cc_major, cc_minor, hardware_sku, driver_version;
