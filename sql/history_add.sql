-- Adds ?4 observations of cell ?1 on day ?2 from origin ?3, saturating
-- at 2^63-1 as the cell's total does.
INSERT INTO cell_history (cell, day, origin, count)
VALUES (?1, ?2, ?3, ?4)
-- @include history_add_conflict
;
