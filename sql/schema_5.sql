-- Schema version 5: the time axis. (views.sql runs just after this file.)
--
-- Every write transaction has a capture time (fdx-ingest --at, default now),
-- kept in ingest_ledger.captured_at as Unix seconds. cell_history holds, per
-- cell (miss and dispatch cells share one id space), the observations added
-- per UTC day: `day` counts days from
-- 1970-01-01, `count` saturates at 2^63-1 like a cell's total, and the
-- saturating sum of a cell's history rows is its total. Rows are keyed by a
-- compact cell id (cell_id in the cell tables, from history_config's
-- counter) instead of the cell's whole key, and by `origin`: 0 for this
-- store's own writes, otherwise the history_origin row of the store (a host)
-- whose history a merge brought in.
--
-- Retention: rows of days before history_config.rolled_before (always the
-- first day of a month) are month buckets keyed by the month's first day;
-- rows from it on are days. Commits move rolled_before forward so that at
-- least daily_days days before the latest day stay daily.
-- Every view goes first (views.sql makes them again just after this file).
-- @include views_drop

ALTER TABLE miss_cell ADD COLUMN cell_id INTEGER;
ALTER TABLE dispatch_cell ADD COLUMN cell_id INTEGER;

CREATE TABLE history_config (
    one           INTEGER PRIMARY KEY CHECK (one = 1),
    daily_days    INTEGER NOT NULL CHECK (daily_days >= 1),
    rolled_before INTEGER NOT NULL,
    latest_day    INTEGER,
    next_cell_id  INTEGER NOT NULL
) STRICT;

CREATE TABLE history_origin (
    id       INTEGER PRIMARY KEY CHECK (id >= 1),
    store_id TEXT    NOT NULL UNIQUE
) STRICT;

CREATE TABLE cell_history (
    cell   INTEGER NOT NULL,
    day    INTEGER NOT NULL,
    origin INTEGER NOT NULL,
    count  INTEGER NOT NULL CHECK (count >= 1),
    PRIMARY KEY (day, cell, origin)
) STRICT, WITHOUT ROWID;

-- The ledgers of the stores merged in (directly or through other stores),
-- so that which host and which run brought what stays answerable.
CREATE TABLE merged_ledger (
-- @include ledger_columns

    PRIMARY KEY (store_id, id)
) STRICT;

-- Day first: a day's ingest appends its rows at the end of the table instead
-- of touching every page of it, and a window of days is a range. A cell's
-- rows are found through its id.
CREATE UNIQUE INDEX miss_cell_by_id ON miss_cell (cell_id);
CREATE UNIQUE INDEX dispatch_cell_by_id ON dispatch_cell (cell_id);

-- The ledger gains the capture time of each transaction and a kind for
-- fdx-prune; SQLite cannot change a CHECK in place, so the ledger is rebuilt
-- (ingest_source, which refers to it, is set aside and put back, and the view
-- naming it is made again by views.sql).
DROP VIEW IF EXISTS fleet_ledger;
CREATE TABLE ledger_next (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT    UNIQUE,          -- fdx-ingest --run-id; NULL when none
    kind          TEXT    NOT NULL CHECK (kind IN ('ingest', 'records', 'merge', 'prune')),
    content_hash  TEXT,                    -- SHA-256 over the sources' digests, in order
    sources       INTEGER NOT NULL,
    bytes         INTEGER NOT NULL,
    lines         INTEGER NOT NULL,
    records       INTEGER NOT NULL,
    skipped       INTEGER NOT NULL,        -- bad lines skipped with --skip-invalid
    cells_added   INTEGER NOT NULL,
    cells_updated INTEGER NOT NULL,        -- for a prune: the cells it removed
    committed_at  TEXT    NOT NULL,        -- UTC, ISO 8601
    captured_at   INTEGER                  -- Unix seconds (fdx-ingest --at)
) STRICT;
INSERT INTO ledger_next
SELECT id, run_id, kind, content_hash, sources, bytes, lines, records, skipped, cells_added,
       cells_updated, committed_at, CAST(strftime('%s', committed_at) AS INTEGER)
FROM ingest_ledger;
CREATE TABLE source_aside AS SELECT * FROM ingest_source;
DROP TABLE ingest_source;
DROP TABLE ingest_ledger;
ALTER TABLE ledger_next RENAME TO ingest_ledger;
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
INSERT INTO ingest_source SELECT * FROM source_aside;
DROP TABLE source_aside;
CREATE INDEX ingest_source_by_hash ON ingest_source (content_hash);

-- What each fdx-prune removed (its ingest_ledger row has kind 'prune').
CREATE TABLE prune_log (
    ledger_id    INTEGER PRIMARY KEY REFERENCES ingest_ledger (id) ON DELETE CASCADE,
    filter       TEXT    NOT NULL,         -- the filters, as JSON
    miss_cells   INTEGER NOT NULL,
    dispatch_cells INTEGER NOT NULL,
    observations INTEGER NOT NULL          -- their counts summed (saturating at 2^63-1)
) STRICT;

-- Cells from before this version: numbered in key order, their whole count
-- on the day of the ingest that last changed them (the migration's day when
-- that is unknown).
UPDATE miss_cell AS m SET cell_id = r.n
FROM (SELECT wanted, kernel_source, kernel_revision_hash, backend, op, dtypes, cc_major,
             cc_minor, hardware_sku, driver_version, row_number() OVER () AS n
      FROM miss_cell) AS r
WHERE m.wanted = r.wanted AND m.kernel_source = r.kernel_source
  AND m.kernel_revision_hash = r.kernel_revision_hash AND m.backend = r.backend
  AND m.op = r.op AND m.dtypes = r.dtypes AND m.cc_major = r.cc_major
  AND m.cc_minor = r.cc_minor AND m.hardware_sku = r.hardware_sku
  AND m.driver_version = r.driver_version;
UPDATE dispatch_cell AS d SET cell_id = r.n + (SELECT count(*) FROM miss_cell)
FROM (SELECT keyed, structure_key, kernel_source, kernel_revision_hash, backend, op, dtypes,
             cc_major, cc_minor, hardware_sku, driver_version, row_number() OVER () AS n
      FROM dispatch_cell) AS r
WHERE d.keyed = r.keyed AND d.structure_key = r.structure_key
  AND d.kernel_source = r.kernel_source AND d.kernel_revision_hash = r.kernel_revision_hash
  AND d.backend = r.backend AND d.op = r.op AND d.dtypes = r.dtypes
  AND d.cc_major = r.cc_major AND d.cc_minor = r.cc_minor
  AND d.hardware_sku = r.hardware_sku AND d.driver_version = r.driver_version;
INSERT INTO cell_history (cell, day, origin, count)
SELECT cell_id, coalesce((SELECT captured_at FROM ingest_ledger WHERE id = m.last_ingest),
                         CAST(strftime('%s', 'now') AS INTEGER)) / 86400, 0, count
FROM miss_cell AS m;
INSERT INTO cell_history (cell, day, origin, count)
SELECT cell_id, coalesce((SELECT captured_at FROM ingest_ledger WHERE id = d.last_ingest),
                         CAST(strftime('%s', 'now') AS INTEGER)) / 86400, 0, count
FROM dispatch_cell AS d;
-- @include history_config_new


PRAGMA user_version = 5;
