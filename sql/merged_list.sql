-- The stores this store says were folded into it.
SELECT store_id, ledger_high, ledger_digest, how FROM merged_store;
