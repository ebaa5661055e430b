-- Records what a prune removed, beside its ledger row.
INSERT INTO prune_log (ledger_id, filter, miss_cells, dispatch_cells, observations)
VALUES (?1, ?2, ?3, ?4, ?5);
