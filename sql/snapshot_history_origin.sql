-- Adds one history_origin row read from a PostgreSQL store to its working copy.
INSERT INTO history_origin (id, store_id)
VALUES (?1, ?2);
