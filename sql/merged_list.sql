-- The stores already folded into this one.
SELECT store_id, ledger_high, merged_at FROM merged_store;
