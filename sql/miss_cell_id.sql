-- The id of a miss cell
-- and the ledger id of the transaction that last changed it (store_flush.c:
-- whether the cell is new to this transaction).
SELECT cell_id, last_ingest FROM miss_cell
WHERE wanted = ?1 AND backend = ?2 AND op = ?3 AND dtypes = ?4
  AND kernel_source = ?5 AND kernel_revision_hash = ?6 AND cc_major = ?7
  AND cc_minor = ?8 AND hardware_sku = ?9 AND driver_version = ?10;
