-- Remembers a store folded into this one (how ?5: see schema_4.sql), read
-- from ?3 or claimed by it.
INSERT INTO merged_store (store_id, ledger_high, source, merged_at, ledger_digest, how)
VALUES (?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?4, ?5);
