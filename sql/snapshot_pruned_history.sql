-- Adds one pruned_history row read from a PostgreSQL store to its working
-- copy.
INSERT INTO pruned_history (cell, day, origin, count)
VALUES (?1, ?2, ?3, ?4);
