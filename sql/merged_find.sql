-- Whether a store was already folded into this one, and at which point.
SELECT ledger_high, merged_at, source FROM merged_store WHERE store_id = ?1;
