-- Removes what schema.sql made, for a first writer that failed before its
-- first commit (after unused.sql, in its transaction): a failed first ingest
-- leaves the database as it was, as it leaves no SQLite file.
DROP VIEW miss_cells, dispatch_cells, miss_demand, miss_demand_by_device, dispatch_candidates,
    dispatch_regret, miss_daily, dispatch_daily, miss_daily_by_store, dispatch_daily_by_store,
    fleet_ledger, miss_growth_7d;
DROP TABLE prune_log, pruned_history, pruned_cell, merged_ledger, cell_history, history_origin,
    history_config, merged_store, store_identity, ingest_source, ingest_ledger, dispatch_cell,
    miss_cell, fdx_meta;
DROP SEQUENCE IF EXISTS fdx_cell_id;
