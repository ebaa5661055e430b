-- A merge's delta, computed in C (store/merge_gains.c): the source's staged
-- history in its primary key's order, so that no sort is needed, with
-- whether each row's cell is new to this store (it has no target yet).
SELECT s.cell, s.origin, s.day, s.count, c.target IS NULL
FROM temp.merge_src AS s JOIN temp.merge_cell AS c ON c.id = s.cell
ORDER BY s.cell, s.origin, s.day;
