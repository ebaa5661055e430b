-- Chooses the kept source (?1) the pgm_rows_*.sql statements read.
INSERT OR REPLACE INTO temp.pgm_now (one, seq) VALUES (1, ?1);
