-- The connection's journal mode, as it is: a store this handle made may have
-- been switched to WAL by another writer since (store.c, remove_if_unused).
PRAGMA main.journal_mode;
