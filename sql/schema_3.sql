-- Schema version 3: when each cell changed, the store's identity, and the
-- stores merged into this one. (views.sql runs just before this file.)
--
-- first_ingest / last_ingest: ingest_ledger ids of the transactions that
-- created and last changed a cell (NULL for cells older than version 3).
-- candidates_set_at: Unix time in ms when a dispatch cell's candidates were
-- last replaced; fdx-merge keeps the later list.
ALTER TABLE miss_cell ADD COLUMN first_ingest INTEGER;
ALTER TABLE miss_cell ADD COLUMN last_ingest INTEGER;
ALTER TABLE dispatch_cell ADD COLUMN first_ingest INTEGER;
ALTER TABLE dispatch_cell ADD COLUMN last_ingest INTEGER;
ALTER TABLE dispatch_cell ADD COLUMN candidates_set_at INTEGER;

-- One row: a random identity given when the store was created (or migrated).
CREATE TABLE store_identity (
    one        INTEGER PRIMARY KEY CHECK (one = 1),
    id         TEXT    NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;
-- @include identity_new


-- Every store whose cells were folded in by fdx-merge, directly or through
-- another store, and how far its ledger had got then.
CREATE TABLE merged_store (
    store_id    TEXT    PRIMARY KEY,
    ledger_high INTEGER NOT NULL,
    source      TEXT    NOT NULL,  -- the path it was merged from (or through)
    merged_at   TEXT    NOT NULL
) STRICT;

PRAGMA user_version = 3;
