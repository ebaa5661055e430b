-- Settings of every fdx connection: no lock or statement timeout of the
-- role's own cuts a push short halfway through a retry loop.
SET lock_timeout = 0;
SET statement_timeout = 0;
