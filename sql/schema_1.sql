-- Schema version 1: one row per aggregated cell (docs/FORMAT.md, "Aggregation").
--
-- Every field of the aggregation tuple is a key column. Absent values are
-- stored as values that equal themselves and differ from every real value,
-- because SQLite treats NULLs in a key as all distinct:
--   * an unkeyed dispatch has keyed = 0 and structure_key = '';
--   * a stamp without compute capability has cc_major = cc_minor = -1.
-- kernel_revision_hash holds the unsigned 64-bit hash with its top bit
-- flipped, so that SQLite's signed order is the hash's unsigned order. The
-- primary keys list their columns in export order (docs/FORMAT.md, "The
-- export"), so an export reads each table in key order without sorting. The views show the
-- hash itself, in hex.
-- dtypes and candidates hold the compact JSON text exactly as exported.
PRAGMA application_id = 1717860401;

CREATE TABLE miss_cell (
    wanted               TEXT    NOT NULL,
-- @include cell_key_checked

    count                INTEGER NOT NULL CHECK (count >= 1),
    CHECK ((cc_major = -1) = (cc_minor = -1)),
    PRIMARY KEY (wanted, kernel_source, kernel_revision_hash, backend, op, dtypes,
                 cc_major, cc_minor, hardware_sku, driver_version)
) STRICT, WITHOUT ROWID;

CREATE TABLE dispatch_cell (
    keyed                INTEGER NOT NULL CHECK (keyed IN (0, 1)),
    structure_key        TEXT    NOT NULL,
-- @include cell_key_checked

    candidates           TEXT    NOT NULL DEFAULT '[]',
    count                INTEGER NOT NULL CHECK (count >= 1),
    CHECK (keyed = 1 OR structure_key = ''),
    CHECK ((cc_major = -1) = (cc_minor = -1)),
    PRIMARY KEY (keyed, structure_key, kernel_source, kernel_revision_hash, backend,
                 op, dtypes, cc_major, cc_minor, hardware_sku, driver_version)
) STRICT, WITHOUT ROWID;

PRAGMA user_version = 1;
