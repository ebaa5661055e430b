-- A merge's delta, computed in C (store/merge_gains.c): one gain, in key order.
INSERT INTO temp.merge_delta (cell, origin, day, delta) VALUES (?1, ?2, ?3, ?4);
