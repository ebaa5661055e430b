-- Whether a store holds nothing yet: no ingest, no merge, no cell. A writer
-- that created the store and failed before its first commit removes it only
-- then (under the write lock, so no other writer's commit is lost).
SELECT NOT EXISTS (SELECT 1 FROM ingest_ledger) AND NOT EXISTS (SELECT 1 FROM merged_store)
   AND NOT EXISTS (SELECT 1 FROM miss_cell) AND NOT EXISTS (SELECT 1 FROM dispatch_cell);
