-- The chosen kept source's stores, as pg/merge_copy_store.sql loads them.
SELECT store_id, ledger_high, ledger_digest, how
FROM temp.pgm_store WHERE seq = (SELECT seq FROM temp.pgm_now);
