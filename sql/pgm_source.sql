-- A source merged into a PostgreSQL store: its path and rolled_before.
INSERT INTO temp.pgm_source (path, rolled_before) VALUES (?1, ?2);
