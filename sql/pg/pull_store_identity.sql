-- Reads store_identity into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT one, id, created_at, file_dev, file_ino
FROM store_identity;
