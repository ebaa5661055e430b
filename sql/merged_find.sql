-- Whether a store was already folded into this one, at which point, and how
-- this store knows it.
SELECT ledger_high, merged_at, source, ledger_digest, how FROM merged_store WHERE store_id = ?1;
