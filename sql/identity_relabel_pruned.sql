-- As identity_relabel.sql, for the counts of pruned cells.
UPDATE pruned_history SET origin = ?1 WHERE origin = 0;
