-- Reads prune_log into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT ledger_id, filter, miss_cells, dispatch_cells, observations
FROM prune_log;
