-- The first thing in a store's history that no fdx store holds, said in
-- words, for the readers of the history (fdx-top's windows and growth,
-- fdx-report, fdx-prune; a store may come from another host): a row whose
-- day, count or cell id is out of range (a month bucket is keyed by its first
-- day, never before 1970, however far back the daily window reaches; an id
-- at or past the next one would be a new cell's history) or whose day is
-- after the latest day the settings hold (NULL: no row), a cell whose id is
-- missing, out of range or also another cell's (of either kind: a file
-- edited in place can hold two rows of one id under a unique index; read
-- through that index, as the readers find ids),
-- or a prune's tombstone naming an id out of range or also a cell's or
-- another tombstone's (a later prune would hand that cell's history to it:
-- prune_tomb_history.sql),
-- a history row of a tombstone's id (a prune moves those, and the next would
-- move such a row too), a tombstone's history row of no tombstone (the
-- next tombstone, numbered after the last, would take it) or out of range,
-- or a history row of either table naming no store (origin 0 is the store
-- itself; the by-store views would drop it). Whether each cell's history adds
-- up to its count is left to fdx-merge, which reads all of it anyway (here a
-- grouped scan cost a window's ranking a third to nine tenths more).
-- Cell ids are given once and never again, so none of these is fdx's. The
-- writers probe only the by-id indexes for the highest id (history.c); this
-- reads every row. No row: the history can be read.
SELECT 'cell_history: a day, count or cell id out of range (cell ' || quote(cell) || ')'
FROM cell_history
WHERE typeof(cell) <> 'integer' OR typeof(day) <> 'integer' OR typeof(count) <> 'integer'
   OR count < 1 OR day < 0 OR day > :max_day OR cell < 1 OR cell >= :next_cell_id
UNION ALL
SELECT CASE WHEN :latest_day IS NULL
            THEN 'cell_history: a day where history_config.latest_day says none was kept (cell '
            ELSE 'cell_history: a day after history_config.latest_day (cell '
       END || quote(cell) || ')'
FROM cell_history
WHERE :latest_day IS NULL OR day > :latest_day
UNION ALL
SELECT 'miss_cell: a cell id missing or out of range (' || quote(cell_id) || ')'
FROM miss_cell
WHERE typeof(cell_id) <> 'integer' OR cell_id < 1 OR cell_id >= :next_cell_id
UNION ALL
SELECT 'dispatch_cell: a cell id missing or out of range (' || quote(cell_id) || ')'
FROM dispatch_cell
WHERE typeof(cell_id) <> 'integer' OR cell_id < 1 OR cell_id >= :next_cell_id
UNION ALL
SELECT 'a miss cell and a dispatch cell share the cell id ' || m.cell_id
FROM miss_cell AS m
JOIN dispatch_cell AS d ON d.cell_id = m.cell_id
UNION ALL
SELECT 'miss_cell: two cells share the cell id ' || cell_id
FROM miss_cell GROUP BY cell_id HAVING count(*) > 1
UNION ALL
SELECT 'dispatch_cell: two cells share the cell id ' || cell_id
FROM dispatch_cell GROUP BY cell_id HAVING count(*) > 1
UNION ALL
SELECT 'pruned_cell: a tombstone names the cell id of a cell or of another tombstone ('
       || p.cell_id || ')'
FROM pruned_cell AS p
WHERE p.cell_id < 1 OR p.cell_id >= :next_cell_id
   OR EXISTS (SELECT 1 FROM miss_cell WHERE cell_id = p.cell_id)
   OR EXISTS (SELECT 1 FROM dispatch_cell WHERE cell_id = p.cell_id)
   OR EXISTS (SELECT 1 FROM pruned_cell AS q WHERE q.cell_id = p.cell_id AND q.id <> p.id)
UNION ALL
SELECT 'cell_history: a row of a pruned cell''s id (cell ' || h.cell || ')'
FROM cell_history AS h
WHERE EXISTS (SELECT 1 FROM pruned_cell WHERE cell_id = h.cell)
UNION ALL
SELECT 'pruned_history: a row of no tombstone, or a day or count out of range (tombstone '
       || quote(cell) || ')'
FROM pruned_history AS ph
WHERE typeof(day) <> 'integer' OR typeof(count) <> 'integer' OR count < 1 OR day < 0
   OR day > :max_day OR NOT EXISTS (SELECT 1 FROM pruned_cell WHERE id = ph.cell)
UNION ALL
SELECT 'cell_history: a row naming no store (origin ' || quote(origin) || ', cell '
       || quote(cell) || ')'
FROM cell_history AS h
WHERE origin <> 0 AND NOT EXISTS (SELECT 1 FROM history_origin WHERE id = h.origin)
UNION ALL
SELECT 'pruned_history: a row naming no store (origin ' || quote(origin) || ', tombstone '
       || quote(cell) || ')'
FROM pruned_history AS h
WHERE origin <> 0 AND NOT EXISTS (SELECT 1 FROM history_origin WHERE id = h.origin)
LIMIT 1;
