-- The chosen kept source's ledger rows, as pg/merge_copy_ledger.sql loads them.
SELECT store_id, id, run_id, kind, records, cells_added, cells_updated, captured_at,
       committed_at
FROM temp.pgm_ledger WHERE seq = (SELECT seq FROM temp.pgm_now);
