-- The ledger of a store being merged and of every store merged into it. The
-- rows a copied store had when it was copied are the original's: each goes
-- under the identity of the first 'copied' store whose ledger position
-- covers it. The last column names the table, for a refusal to name it.
SELECT coalesce((SELECT store_id FROM merged_store
                 WHERE how = 'copied' AND ledger_high >= l.id
                 ORDER BY ledger_high LIMIT 1),
                (SELECT id FROM store_identity)),
       id, run_id, kind, records, cells_added, cells_updated, captured_at, committed_at,
       'ingest_ledger'
FROM ingest_ledger AS l
UNION ALL
SELECT store_id, id, run_id, kind, records, cells_added, cells_updated, captured_at,
       committed_at, 'merged_ledger'
FROM merged_ledger;
