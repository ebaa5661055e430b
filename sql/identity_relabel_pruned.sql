-- As identity_relabel.sql, for the counts of pruned cells.
INSERT INTO pruned_history (cell, day, origin, count)
SELECT cell, day, ?1, count FROM temp.relabel_pruned ORDER BY rowid;
