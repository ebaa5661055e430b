-- The push's transaction id, to learn after a lost connection whether its
-- COMMIT went through (txid_status.sql).
SELECT txid_current();
