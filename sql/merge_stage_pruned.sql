-- Stages ?4 observations that the source pruned of staged cell ?1 (a cell it
-- holds again) in history bucket ?2 by store ?3: added (saturating at
-- 2^63-1) to what its live history staged for that key.
INSERT INTO temp.merge_history (cell, day, store_id, count)
VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (cell, store_id, day) DO UPDATE
SET count = CASE WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
                 ELSE count + excluded.count END;
