-- After a copy got an identity of its own: the history it held as its own
-- (origin 0), moved aside by identity_relabel_stage.sql, goes back under
-- origin ?1, the store it was copied from, in key order.
INSERT INTO cell_history (cell, day, origin, count)
SELECT cell, day, ?1, count FROM temp.relabel_history ORDER BY rowid;
