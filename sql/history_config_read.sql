-- The history settings and counters (see schema_5.sql).
SELECT daily_days, rolled_before, latest_day, next_cell_id FROM history_config;
