-- Settings for every connection that writes; synchronous=EXTRA makes a
-- committed ingest survive a power cut: in WAL mode it is FULL, and through
-- a rollback journal (a store's first commit) it also syncs the directory
-- once the journal is deleted, the moment the commit takes effect. The
-- journal mode is set apart (journal_wal.sql): a store's first commit is
-- made without WAL.
PRAGMA synchronous = EXTRA;
PRAGMA foreign_keys = ON;
