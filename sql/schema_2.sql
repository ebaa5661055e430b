-- Schema version 2: the ingest ledger. One ingest_ledger row per committed
-- write transaction (an fdx-ingest invocation, a sink drain, a batch of
-- records), one ingest_source row per file or stream it read.
CREATE TABLE ingest_ledger (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT    UNIQUE,          -- fdx-ingest --run-id; NULL when none
    kind          TEXT    NOT NULL CHECK (kind IN ('ingest', 'records', 'merge')),
    content_hash  TEXT,                    -- SHA-256 over the sources' digests, in order
    sources       INTEGER NOT NULL,
    bytes         INTEGER NOT NULL,
    lines         INTEGER NOT NULL,
    records       INTEGER NOT NULL,
    skipped       INTEGER NOT NULL,        -- bad lines skipped with --skip-invalid
    cells_added   INTEGER NOT NULL,
    cells_updated INTEGER NOT NULL,
    committed_at  TEXT    NOT NULL         -- UTC, ISO 8601
) STRICT;

CREATE TABLE ingest_source (
    ledger_id     INTEGER NOT NULL REFERENCES ingest_ledger (id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,        -- 0-based, in reading order
    path          TEXT    NOT NULL,        -- as given; '<stdin>' for standard input
    content_hash  TEXT    NOT NULL,        -- SHA-256 of the bytes read
    bytes         INTEGER NOT NULL,
    lines         INTEGER NOT NULL,
    records       INTEGER NOT NULL,
    skipped       INTEGER NOT NULL,
    PRIMARY KEY (ledger_id, position)
) STRICT;

CREATE INDEX ingest_source_by_hash ON ingest_source (content_hash);

PRAGMA user_version = 2;
