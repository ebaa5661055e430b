-- Reads pruned_history into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT cell, day, origin, count
FROM pruned_history;
