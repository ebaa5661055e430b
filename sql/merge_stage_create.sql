-- The staging tables of a merge into this store (see docs/FORMAT.md, "How a
-- merge applies"): what the source holds, staged by the backend-neutral
-- reader (merge_read.c), then the working tables of the apply statements
-- (merge_apply_*.sql). TEMP: they live in the target's connection only.
CREATE TEMP TABLE IF NOT EXISTS merge_cell (
    id                   INTEGER PRIMARY KEY,          -- the reader's number for the cell
    kind                 TEXT    NOT NULL,             -- 'miss' or 'dispatch'
    keyed                INTEGER NOT NULL,             -- misses: 1
    token                TEXT    NOT NULL,             -- wanted, or structure_key
-- @include cell_key_columns

    candidates           TEXT    NOT NULL,             -- misses: '[]'
    candidates_set_at    INTEGER,
    target               INTEGER,                      -- the target's cell_id (apply)
    tomb                 INTEGER,                      -- the target's pruned_cell id (apply)
    gain                 INTEGER NOT NULL DEFAULT 0,   -- observations it brings (apply)
    added                INTEGER NOT NULL DEFAULT 0    -- 1: new to the target (apply)
);
CREATE TEMP TABLE IF NOT EXISTS merge_history (
    cell     INTEGER NOT NULL,                         -- merge_cell.id
    day      INTEGER NOT NULL,                         -- a day, or a month's first day
    store_id TEXT    NOT NULL,                         -- the store that observed it
    count    INTEGER NOT NULL,
    PRIMARY KEY (cell, store_id, day)
) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS merge_ledger (
-- @include ledger_columns

    PRIMARY KEY (store_id, id)
);
CREATE TEMP TABLE IF NOT EXISTS merge_store (
    store_id      TEXT    PRIMARY KEY,
    ledger_high   INTEGER NOT NULL,
    ledger_digest TEXT,
    how           TEXT    NOT NULL                     -- 'read' (the source) or 'held'
);
CREATE TEMP TABLE IF NOT EXISTS merge_src (
    cell INTEGER NOT NULL, origin INTEGER NOT NULL, day INTEGER NOT NULL,
    count INTEGER NOT NULL, PRIMARY KEY (cell, origin, day)
) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS merge_tgt (
    cell INTEGER NOT NULL, origin INTEGER NOT NULL, day INTEGER NOT NULL,
    count INTEGER NOT NULL, PRIMARY KEY (cell, origin, day)
) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS merge_delta (
    cell INTEGER NOT NULL, origin INTEGER NOT NULL, day INTEGER NOT NULL,
    delta INTEGER NOT NULL, PRIMARY KEY (cell, origin, day)
) WITHOUT ROWID;
