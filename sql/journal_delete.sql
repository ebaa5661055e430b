-- Back from WAL to a rollback journal, for removing a new store that holds
-- nothing (store.c): SQLite leaves WAL only when no other connection has the
-- store open, and in rollback mode the lock taken for the removal keeps
-- readers out as well as writers.
PRAGMA journal_mode = DELETE;
