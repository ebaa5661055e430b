-- The history of a store being merged, a cell's rows together: the cell's id
-- (miss and dispatch cells share one id space), the bucket, the origin and
-- the count.
SELECT cell, day, origin, count FROM cell_history ORDER BY cell;
