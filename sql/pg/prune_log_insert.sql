-- Records what a prune removed, beside its ledger row.
INSERT INTO prune_log (ledger_id, filter, miss_cells, dispatch_cells, observations)
VALUES ($1::bigint, $2, $3::bigint, $4::bigint, $5::bigint);
