-- Reads history_origin into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT id, store_id
FROM history_origin;
