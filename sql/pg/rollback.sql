-- Undoes the PostgreSQL transaction.
ROLLBACK;
