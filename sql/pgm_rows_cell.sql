-- The chosen kept source's cells, as pg/merge_copy_cell.sql loads them.
SELECT id, kind, keyed, token, backend, op, dtypes, kernel_source, kernel_revision_hash,
       cc_major, cc_minor, hardware_sku, driver_version, candidates, candidates_set_at
FROM temp.pgm_cell WHERE seq = (SELECT seq FROM temp.pgm_now);
