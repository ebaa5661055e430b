-- Stages the source itself (?4 'read', with its ledger position and digest)
-- or a store it says it holds (?4 'held').
INSERT INTO temp.merge_store (store_id, ledger_high, ledger_digest, how)
VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (store_id) DO NOTHING;
