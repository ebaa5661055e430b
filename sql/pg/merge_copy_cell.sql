-- Loads a merge's staged cells (../pgm_rows_cell.sql's rows).
COPY merge_cell (id, kind, keyed, token, backend, op, dtypes, kernel_source,
                     kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version,
                     candidates, candidates_set_at) FROM STDIN;
