-- For removing a new store's file that holds nothing (store.c): the write
-- lock there starts a journal, which a full disk refuses; kept in memory it
-- needs no room, and the transaction only reads and is rolled back.
PRAGMA journal_mode = MEMORY;
