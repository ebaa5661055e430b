-- The local working copy of a store kept elsewhere (PostgreSQL) is rebuilt
-- from the store whenever it is opened: it need not survive a crash.
PRAGMA synchronous = OFF;
