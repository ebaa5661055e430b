-- Number of miss cells and of dispatch cells.
SELECT (SELECT count(*) FROM miss_cell), (SELECT count(*) FROM dispatch_cell);
