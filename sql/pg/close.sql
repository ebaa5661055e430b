-- Closes the cursor of a pull_*.sql statement.
CLOSE fdx_pull;
