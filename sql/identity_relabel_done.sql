-- The end of a copy's relabelling: the rows moved aside are back.
DROP TABLE temp.relabel_history;
DROP TABLE temp.relabel_pruned;
