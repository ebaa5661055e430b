-- After a copy got an identity of its own: the history it held as its own
-- (origin 0) was written by the store it was copied from, origin ?1 now.
UPDATE cell_history SET origin = ?1 WHERE origin = 0;
