-- The history settings, locked until the push commits: pushes into one store
-- take their turns here, so each sees the retention the last one left.
SELECT daily_days, rolled_before, latest_day FROM history_config FOR UPDATE;
