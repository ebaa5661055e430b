-- Apply, step 11: the ledger rows of the source and of the stores merged into
-- it, each kept once (this store's own rows, come back through a cycle of
-- merges, are in ingest_ledger already, and so are the rows of the store
-- this one is a copy of, up to the position it was copied at). The same
-- text serves PostgreSQL (pg/merge_ledger.sql): merge_ledger is the TEMP
-- table.
INSERT INTO merged_ledger (store_id, id, run_id, kind, records, cells_added, cells_updated,
                           captured_at, committed_at)
SELECT store_id, id, run_id, kind, records, cells_added, cells_updated, captured_at,
       committed_at
FROM merge_ledger AS l
WHERE store_id <> (SELECT id FROM store_identity)
  AND NOT EXISTS (SELECT 1 FROM merged_store AS c
                  WHERE c.store_id = l.store_id AND c.how = 'copied' AND l.id <= c.ledger_high)
ON CONFLICT (store_id, id) DO NOTHING;
