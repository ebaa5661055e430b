-- Whether a miss cell is already stored (used only when the returned count
-- of an upsert cannot tell an insert from an update).
SELECT 1 FROM miss_cell
WHERE wanted = ?1 AND backend = ?2 AND op = ?3 AND dtypes = ?4
  AND kernel_source = ?5 AND kernel_revision_hash = ?6 AND cc_major = ?7
  AND cc_minor = ?8 AND hardware_sku = ?9 AND driver_version = ?10;
