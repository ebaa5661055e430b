-- Adds one store_identity row read from a PostgreSQL store to its working copy.
INSERT INTO store_identity (one, id, created_at, file_dev, file_ino)
VALUES (?1, ?2, ?3, ?4, ?5);
