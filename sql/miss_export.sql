-- Every miss cell in export order (WIRE.md section 3). The revision hash is
-- stored as a signed bit pattern, so "hash < 0" first puts it in unsigned order.
SELECT wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
       cc_major, cc_minor, hardware_sku, driver_version, count
FROM miss_cell
ORDER BY wanted, kernel_source, kernel_revision_hash < 0, kernel_revision_hash,
         backend, op, dtypes, cc_major, cc_minor, hardware_sku, driver_version;
