-- Starts a write transaction on the PostgreSQL store.
BEGIN;
