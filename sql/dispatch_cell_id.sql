-- The id of a dispatch cell
-- and the ledger id of the transaction that last changed it (store_flush.c:
-- whether the cell is new to this transaction).
SELECT cell_id, last_ingest FROM dispatch_cell
WHERE keyed = ?1 AND structure_key = ?2 AND backend = ?3 AND op = ?4
  AND dtypes = ?5 AND kernel_source = ?6 AND kernel_revision_hash = ?7
  AND cc_major = ?8 AND cc_minor = ?9 AND hardware_sku = ?10
  AND driver_version = ?11;
