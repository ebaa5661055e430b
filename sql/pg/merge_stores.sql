-- Apply, step 12 (../merge_apply_stores.sql, which says why): remembers the
-- source ($1 its path) at its ledger position and digest, and the stores it
-- holds.
INSERT INTO merged_store AS m (store_id, ledger_high, source, merged_at, ledger_digest, how)
SELECT store_id, ledger_high, $1::text,
       to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       ledger_digest, how
FROM merge_store
WHERE store_id <> (SELECT id FROM store_identity)
ORDER BY store_id
ON CONFLICT (store_id) DO UPDATE SET
    ledger_high = excluded.ledger_high,
    source = excluded.source,
    merged_at = excluded.merged_at,
    ledger_digest = excluded.ledger_digest,
    how = 'read'
WHERE excluded.how = 'read' AND m.how IS DISTINCT FROM 'copied'
  AND (m.how IS DISTINCT FROM 'read' OR excluded.ledger_high >= m.ledger_high);
