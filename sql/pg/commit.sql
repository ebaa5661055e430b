-- Commits the PostgreSQL transaction.
COMMIT;
