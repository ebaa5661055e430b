-- fdx-diff: every dispatch cell of the attached store, as
-- merge_read_dispatches.sql reads a store's own, so they are checked in the
-- comparison's snapshot.
SELECT keyed, structure_key, backend, op, dtypes, kernel_source,
       kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version,
       candidates, count, candidates_set_at, cell_id
FROM fdx_other.dispatch_cell
ORDER BY keyed, structure_key, kernel_source, kernel_revision_hash, backend, op, dtypes,
         cc_major, cc_minor, hardware_sku, driver_version;
