-- Apply, step 12: remembers the source (?1 its path) at its ledger position
-- and digest ('read': a later merge of it unchanged can be skipped without
-- reading its cells), and records the stores it says it holds ('held', for
-- information only). A 'copied' row (this store is a copy of that one) stays
-- as it is: it says which of this store's ledger rows are the original's.
INSERT INTO merged_store (store_id, ledger_high, source, merged_at, ledger_digest, how)
SELECT store_id, ledger_high, ?1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ledger_digest, how
FROM temp.merge_store
WHERE store_id <> (SELECT id FROM store_identity)
ON CONFLICT (store_id) DO UPDATE SET
    ledger_high = excluded.ledger_high,
    source = excluded.source,
    merged_at = excluded.merged_at,
    ledger_digest = excluded.ledger_digest,
    how = 'read'
WHERE excluded.how = 'read' AND merged_store.how IS NOT 'copied'
  AND (merged_store.how IS NOT 'read' OR excluded.ledger_high >= merged_store.ledger_high);
