-- Remembers a store folded into this one (directly, or through ?3).
INSERT INTO merged_store (store_id, ledger_high, source, merged_at)
VALUES (?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
