-- fdx-diff: every miss cell of the attached store, as merge_read_misses.sql
-- reads a store's own, so they are checked in the comparison's snapshot.
SELECT wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
       cc_major, cc_minor, hardware_sku, driver_version, count, NULL, cell_id
FROM fdx_other.miss_cell
ORDER BY wanted, kernel_source, kernel_revision_hash, backend, op, dtypes, cc_major,
         cc_minor, hardware_sku, driver_version;
