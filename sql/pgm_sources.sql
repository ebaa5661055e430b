-- The kept sources, in the order they were merged.
SELECT seq, path, rolled_before FROM temp.pgm_source ORDER BY seq;
