-- Adds one history_config row read from a PostgreSQL store to its working copy.
INSERT INTO history_config (one, daily_days, rolled_before, latest_day, next_cell_id)
VALUES (?1, ?2, ?3, ?4, ?5);
