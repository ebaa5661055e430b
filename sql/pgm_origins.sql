-- Every store the kept history names, sorted: the order the push locks them.
SELECT DISTINCT store_id FROM temp.pgm_history ORDER BY store_id;
