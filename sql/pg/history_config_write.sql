-- Stores the history settings at the end of a push.
UPDATE history_config SET daily_days = $1::bigint, rolled_before = $2::bigint,
                          latest_day = $3::bigint;
