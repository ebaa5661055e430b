-- Apply, step 7: ids for the staged cells new to this store that gain
-- anything (a cell whose counts this store pruned, with nothing since, stays
-- away), from ?1 (history_config.next_cell_id) on. The SQLite target computes
-- it in C with steps 5 and 6 (store/merge_gains.c); this statement is the
-- definition that code is tested against.
UPDATE temp.merge_cell SET target = ?1 + r.n - 1, added = 1
FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM temp.merge_cell
      WHERE target IS NULL AND gain > 0) AS r
WHERE merge_cell.id = r.id;
