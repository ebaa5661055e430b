-- Adds one prune_log row read from a PostgreSQL store to its working copy.
INSERT INTO prune_log (ledger_id, filter, miss_cells, dispatch_cells, observations)
VALUES (?1, ?2, ?3, ?4, ?5);
