-- The first of a copy's relabelling (identity.c), as one script: the history
-- rows it held as its own (origin 0) move aside, in key order, and out of
-- the tables. Changing the origin in place rewrote each row through two
-- B-tree searches, a delete and an insert (about 2 us a row); moved aside and
-- written back in order (identity_relabel*.sql), the rows are appended.
-- The rows aside are read once, in order: a small cache serves them as well as
-- SQLite's default, whose 2 MiB of pages the connection would keep beside the
-- ingest that follows (identity_relabel_done.sql gives the default back).
PRAGMA temp.cache_size = -256;
DROP TABLE IF EXISTS temp.relabel_history;
DROP TABLE IF EXISTS temp.relabel_pruned;
CREATE TEMP TABLE relabel_history AS
    SELECT cell, day, count FROM cell_history WHERE origin = 0 ORDER BY day, cell;
CREATE TEMP TABLE relabel_pruned AS
    SELECT cell, day, count FROM pruned_history WHERE origin = 0 ORDER BY cell, day;
DELETE FROM cell_history WHERE origin = 0;
DELETE FROM pruned_history WHERE origin = 0;
