-- Reads merged_ledger into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT store_id, id, run_id, kind, records, cells_added, cells_updated, captured_at,
       committed_at
FROM merged_ledger;
