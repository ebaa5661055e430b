-- Settings for every connection that writes; synchronous=FULL makes a
-- committed ingest survive a power cut. The journal mode is set apart
-- (journal_wal.sql): a store's first commit is made without WAL.
PRAGMA synchronous = FULL;
PRAGMA foreign_keys = ON;
