-- The history's settings as a store's cells leave them: the next cell id
-- after those numbered, the latest day they were seen (schema_5.sql, and
-- schema_new.sql for a store made from the schema image, which holds none).
INSERT INTO history_config (one, daily_days, rolled_before, latest_day, next_cell_id)
VALUES (1, 90, -2147483648,
        (SELECT max(day) FROM cell_history),
        (SELECT count(*) FROM miss_cell) + (SELECT count(*) FROM dispatch_cell) + 1);
