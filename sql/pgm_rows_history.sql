-- The chosen kept source's history, as pg/merge_copy_history.sql loads it.
SELECT cell, day, store_id, count
FROM temp.pgm_history WHERE seq = (SELECT seq FROM temp.pgm_now);
