-- Drops every view of views.sql (which makes them again): views.sql runs it
-- first, and schema_5.sql before rebuilding ingest_ledger, since SQLite then
-- re-reads every view (one over what does not exist yet fails, and with
-- trusted_schema off so do dispatch_candidates' JSON operators).
DROP VIEW IF EXISTS miss_cells;
DROP VIEW IF EXISTS dispatch_cells;
DROP VIEW IF EXISTS miss_demand;
DROP VIEW IF EXISTS miss_demand_by_device;
DROP VIEW IF EXISTS dispatch_candidates;
DROP VIEW IF EXISTS dispatch_regret;
DROP VIEW IF EXISTS miss_daily;
DROP VIEW IF EXISTS dispatch_daily;
DROP VIEW IF EXISTS miss_daily_by_store;
DROP VIEW IF EXISTS dispatch_daily_by_store;
DROP VIEW IF EXISTS miss_growth_7d;
DROP VIEW IF EXISTS fleet_ledger;
