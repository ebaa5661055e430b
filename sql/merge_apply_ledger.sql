-- Apply, step 11: the ledger rows of the source and of the stores merged into
-- it, each kept once (this store's own rows, come back through a cycle of
-- merges, are in ingest_ledger already). The same text serves PostgreSQL
-- (pg/merge_ledger.sql): merge_ledger is the TEMP table.
INSERT INTO merged_ledger (store_id, id, run_id, kind, records, cells_added, cells_updated,
                           captured_at, committed_at)
SELECT store_id, id, run_id, kind, records, cells_added, cells_updated, captured_at,
       committed_at
FROM merge_ledger
WHERE store_id <> (SELECT id FROM store_identity)
ON CONFLICT (store_id, id) DO NOTHING;
