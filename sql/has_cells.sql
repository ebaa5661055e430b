-- Whether the store holds any cell.
SELECT EXISTS (SELECT 1 FROM miss_cell) OR EXISTS (SELECT 1 FROM dispatch_cell);
