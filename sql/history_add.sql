-- Adds ?4 observations of cell ?1 on day ?2 from origin ?3, saturating
-- at 2^63-1 as the cell's total does.
INSERT INTO cell_history (cell, day, origin, count)
VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (day, cell, origin) DO UPDATE SET
    count = CASE
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END;
