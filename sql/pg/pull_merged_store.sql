-- Reads merged_store into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT store_id, ledger_high, source, merged_at, ledger_digest, how
FROM merged_store;
