-- The history settings and counters (see schema_5.sql), and the highest cell
-- id that each cell table and the prune tombstones hold: a writer numbers new
-- cells from next_cell_id, so a store already holding it (not written by fdx)
-- is refused before an id is given twice. Then whether each cell table's
-- lowest id (NULL sorts first) is missing or below 1: a cell without its id
-- would take the history of another, or none. Each is one probe of its by-id
-- index.
SELECT daily_days, rolled_before, latest_day, next_cell_id,
       (SELECT max(cell_id) FROM miss_cell),
       (SELECT max(cell_id) FROM dispatch_cell),
       (SELECT max(cell_id) FROM pruned_cell),
       (SELECT cell_id IS NULL OR cell_id < 1 FROM miss_cell ORDER BY cell_id LIMIT 1),
       (SELECT cell_id IS NULL OR cell_id < 1 FROM dispatch_cell ORDER BY cell_id LIMIT 1)
FROM history_config;
