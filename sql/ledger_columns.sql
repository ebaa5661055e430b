-- The columns of a merged ledger row: merged_ledger (schema_5.sql) and the
-- merge's staged ledger (merge_stage_create.sql). Not run alone.
    store_id      TEXT    NOT NULL,
    id            INTEGER NOT NULL,
    run_id        TEXT,
    kind          TEXT    NOT NULL,
    records       INTEGER NOT NULL,
    cells_added   INTEGER NOT NULL,
    cells_updated INTEGER NOT NULL,
    captured_at   INTEGER,
    committed_at  TEXT    NOT NULL,
