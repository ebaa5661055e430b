-- 'committed', 'aborted' or 'in progress' for transaction $1 (NULL: too old to know).
SELECT txid_status($1::bigint);
