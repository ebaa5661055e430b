-- Stages ?4 observations of staged cell ?1 in history bucket ?2 (a day, or a
-- month's first day) by store ?3. Two rows for one key (only a crafted
-- source has them) keep the larger count.
INSERT INTO temp.merge_history (cell, day, store_id, count)
VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (cell, store_id, day) DO UPDATE SET count = max(count, excluded.count);
