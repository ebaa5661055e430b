-- The rows a new working copy gets from its own creation (its identity, its
-- history settings), replaced by those of the PostgreSQL store it stands for.
DELETE FROM store_identity;
DELETE FROM history_config;
