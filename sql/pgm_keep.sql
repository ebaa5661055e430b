-- A merge into a PostgreSQL store (pg_merge.c) keeps each source's staged
-- rows in the working copy's transaction until the push applies them in
-- PostgreSQL: seq numbers the sources in the order they were merged.
CREATE TEMP TABLE IF NOT EXISTS pgm_source (
    seq INTEGER PRIMARY KEY, path TEXT NOT NULL, rolled_before INTEGER NOT NULL
);
CREATE TEMP TABLE IF NOT EXISTS pgm_cell (
    seq INTEGER NOT NULL, id INTEGER NOT NULL, kind TEXT, keyed INTEGER, token TEXT,
    backend TEXT, op TEXT, dtypes TEXT, kernel_source TEXT, kernel_revision_hash INTEGER,
    cc_major INTEGER, cc_minor INTEGER, hardware_sku TEXT, driver_version TEXT,
    candidates TEXT, candidates_set_at INTEGER, PRIMARY KEY (seq, id)
);
CREATE TEMP TABLE IF NOT EXISTS pgm_history (
    seq INTEGER NOT NULL, cell INTEGER, day INTEGER, store_id TEXT, count INTEGER
);
CREATE INDEX IF NOT EXISTS temp.pgm_history_by_seq ON pgm_history (seq);
CREATE TEMP TABLE IF NOT EXISTS pgm_ledger (
    seq INTEGER NOT NULL, store_id TEXT, id INTEGER, run_id TEXT, kind TEXT, records INTEGER,
    cells_added INTEGER, cells_updated INTEGER, captured_at INTEGER, committed_at TEXT
);
CREATE TEMP TABLE IF NOT EXISTS pgm_store (
    seq INTEGER NOT NULL, store_id TEXT, ledger_high INTEGER, ledger_digest TEXT, how TEXT
);
CREATE TEMP TABLE IF NOT EXISTS pgm_now (one INTEGER PRIMARY KEY CHECK (one = 1), seq INTEGER);
