-- Adds one cell_history row read from a PostgreSQL store to its working copy.
INSERT INTO cell_history (cell, day, origin, count)
VALUES (?1, ?2, ?3, ?4);
