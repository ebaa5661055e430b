-- How long a writer waits for a lock ($1, such as '10000ms') before it
-- fails: the store's busy timeout, for the session ($2 false: set at every
-- connection) or for the transaction ($2 true: a push, after a change of it).
SELECT set_config('lock_timeout', $1, $2::boolean);
