-- Apply, step 2: each staged cell's id in this store, and its tombstone
-- (pruned_cell) if this store pruned that key before. The same text serves
-- PostgreSQL (pg/merge_targets.sql): merge_cell is the TEMP table.
UPDATE merge_cell AS s SET
    target = CASE s.kind
        WHEN 'miss' THEN
            (SELECT cell_id FROM miss_cell AS m
             WHERE m.wanted = s.token AND m.kernel_source = s.kernel_source
               AND m.kernel_revision_hash = s.kernel_revision_hash AND m.backend = s.backend
               AND m.op = s.op AND m.dtypes = s.dtypes AND m.cc_major = s.cc_major
               AND m.cc_minor = s.cc_minor AND m.hardware_sku = s.hardware_sku
               AND m.driver_version = s.driver_version)
        ELSE
            (SELECT cell_id FROM dispatch_cell AS d
             WHERE d.keyed = s.keyed AND d.structure_key = s.token
               AND d.kernel_source = s.kernel_source
               AND d.kernel_revision_hash = s.kernel_revision_hash AND d.backend = s.backend
               AND d.op = s.op AND d.dtypes = s.dtypes AND d.cc_major = s.cc_major
               AND d.cc_minor = s.cc_minor AND d.hardware_sku = s.hardware_sku
               AND d.driver_version = s.driver_version)
    END,
    tomb = CASE WHEN EXISTS (SELECT 1 FROM pruned_cell) THEN
           (SELECT id FROM pruned_cell AS p
            WHERE p.kind = s.kind AND p.keyed = s.keyed AND p.token = s.token
              AND p.kernel_source = s.kernel_source
              AND p.kernel_revision_hash = s.kernel_revision_hash AND p.backend = s.backend
              AND p.op = s.op AND p.dtypes = s.dtypes AND p.cc_major = s.cc_major
              AND p.cc_minor = s.cc_minor AND p.hardware_sku = s.hardware_sku
              AND p.driver_version = s.driver_version) END;
