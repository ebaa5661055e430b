-- Stores the history settings and counters at commit.
UPDATE history_config
SET daily_days = ?1, rolled_before = ?2, latest_day = ?3, next_cell_id = ?4;
