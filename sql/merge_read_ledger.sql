-- The ledger of a store being merged and of every store merged into it.
SELECT (SELECT id FROM store_identity), id, run_id, kind, records, cells_added, cells_updated,
       captured_at, committed_at
FROM ingest_ledger
UNION ALL
SELECT store_id, id, run_id, kind, records, cells_added, cells_updated, captured_at,
       committed_at
FROM merged_ledger;
