-- Drops the ledger row of a transaction that changed nothing.
DELETE FROM ingest_ledger WHERE id = ?1;
