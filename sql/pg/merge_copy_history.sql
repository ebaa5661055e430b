-- Loads a merge's staged history (../pgm_rows_history.sql's rows).
COPY merge_history (cell, day, store_id, count) FROM STDIN;
