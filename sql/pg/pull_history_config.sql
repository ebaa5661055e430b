-- Reads history_config into the local working copy (pg_snapshot.c), in the
-- snapshot's transaction.
DECLARE fdx_pull NO SCROLL CURSOR FOR
SELECT one, daily_days, rolled_before, latest_day, next_cell_id
FROM history_config;
