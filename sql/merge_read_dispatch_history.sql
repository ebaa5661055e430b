-- The history of every dispatch cell of a store being merged, a cell's rows
-- together: its key (columns as in dispatch_export.sql), its id, then each day.
SELECT d.keyed, d.structure_key, d.backend, d.op, d.dtypes, d.kernel_source,
       d.kernel_revision_hash, d.cc_major, d.cc_minor, d.hardware_sku, d.driver_version,
       h.cell, h.day, h.origin, h.count
FROM cell_history AS h
JOIN dispatch_cell AS d ON d.cell_id = h.cell
ORDER BY h.cell;
