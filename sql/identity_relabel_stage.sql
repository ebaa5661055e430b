-- The first of a copy's relabelling (identity.c), as one script: the history
-- rows it held as its own (origin 0) move aside, in key order, and out of
-- the tables. Changing the origin in place rewrote each row through two
-- B-tree searches, a delete and an insert (about 2 us a row); moved aside and
-- written back in order (identity_relabel*.sql), the rows are appended.
DROP TABLE IF EXISTS temp.relabel_history;
DROP TABLE IF EXISTS temp.relabel_pruned;
CREATE TEMP TABLE relabel_history AS
    SELECT cell, day, count FROM cell_history WHERE origin = 0 ORDER BY day, cell;
CREATE TEMP TABLE relabel_pruned AS
    SELECT cell, day, count FROM pruned_history WHERE origin = 0 ORDER BY cell, day;
DELETE FROM cell_history WHERE origin = 0;
DELETE FROM pruned_history WHERE origin = 0;
