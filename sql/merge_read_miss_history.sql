-- The history of every miss cell of a store being merged, a cell's rows
-- together: its key (columns as in miss_export.sql), its id, then each day.
SELECT m.wanted, m.backend, m.op, m.dtypes, m.kernel_source, m.kernel_revision_hash,
       m.cc_major, m.cc_minor, m.hardware_sku, m.driver_version, h.cell, h.day, h.origin,
       h.count
FROM cell_history AS h
JOIN miss_cell AS m ON m.cell_id = h.cell
ORDER BY h.cell;
