-- The next batch of the cursor a pull_*.sql statement opened.
FETCH FORWARD 8192 FROM fdx_pull;
