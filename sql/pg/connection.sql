-- Settings of every fdx connection, run again after each reconnection: no
-- statement timeout of the role's own cuts a push short halfway through a
-- retry loop (locks are waited for as long as the store's busy timeout,
-- lock_timeout.sql, set after these).
SET statement_timeout = 0;
