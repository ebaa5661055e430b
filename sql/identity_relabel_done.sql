-- The end of a copy's relabelling: the rows moved aside are back.
DROP TABLE temp.relabel_history;
DROP TABLE temp.relabel_pruned;
PRAGMA temp.cache_size = -2000; -- SQLite's default, for a merge's staging tables
