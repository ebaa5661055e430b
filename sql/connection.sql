-- Settings for every connection that writes: WAL lets readers run beside one
-- writer; synchronous=FULL makes a committed ingest survive a power cut.
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
PRAGMA foreign_keys = ON;
