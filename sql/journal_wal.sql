-- WAL lets readers run beside one writer. Set on every writer's connection
-- to a store that holds something, and after the first commit into a new one.
PRAGMA journal_mode = WAL;
