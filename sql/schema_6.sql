-- Schema version 6: what makes merges incremental.
--
-- A merge treats each (cell, origin store, history bucket) count as a
-- grow-only counter and keeps, per key, the larger of the target's and the
-- source's count; a prune must not let a later merge bring back what it
-- removed. So a prune moves the history of the cells it removes here instead
-- of dropping it: pruned_cell keeps each removed cell's key (once, however
-- often it is pruned), pruned_history its counts per bucket and origin
-- (summed over every prune of that key, saturating at 2^63-1). A merge
-- compares the source's counts with the target's live history plus these.
--
-- merged_store keeps its shape; from this version on a 'read' row holds the
-- latest ledger position and digest merged (a repeat at that very ledger is
-- skipped unread), and 'held' rows are recorded for information only: no
-- merge is refused any more, since none can count a store's cells twice.
CREATE TABLE pruned_cell (
    id                   INTEGER PRIMARY KEY,
    kind                 TEXT    NOT NULL CHECK (kind IN ('miss', 'dispatch')),
    keyed                INTEGER NOT NULL,   -- dispatch cells: keyed; miss cells: 1
    token                TEXT    NOT NULL,   -- wanted, or structure_key
-- @include cell_key_columns

    cell_id              INTEGER NOT NULL,   -- the id the cell had when last pruned
    UNIQUE (kind, keyed, token, kernel_source, kernel_revision_hash, backend, op, dtypes,
            cc_major, cc_minor, hardware_sku, driver_version)
) STRICT;

-- A prune finds the tombstone of each history row it moves by the cell id.
CREATE INDEX pruned_cell_by_cell_id ON pruned_cell (cell_id);

CREATE TABLE pruned_history (
    cell   INTEGER NOT NULL,                 -- pruned_cell.id
    day    INTEGER NOT NULL,
    origin INTEGER NOT NULL,
    count  INTEGER NOT NULL CHECK (count >= 1),
    PRIMARY KEY (cell, origin, day)
) STRICT, WITHOUT ROWID;

PRAGMA user_version = 6;
