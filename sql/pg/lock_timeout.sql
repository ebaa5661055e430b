-- How long the transaction waits for a lock ($1, such as '10000ms') before
-- it fails: a wait for a lost commit is bounded by the store's busy timeout.
SELECT set_config('lock_timeout', $1, true);
