-- A store's identity row, given when it is created (schema_3.sql, and
-- schema_new.sql for a store made from the schema image).
INSERT INTO store_identity (one, id, created_at)
VALUES (1, lower(hex(randomblob(16))), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
