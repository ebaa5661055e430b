#!/usr/bin/env python3
"""Writes the seed stores of the fuzz_store target.

Real stores made by fdx-ingest and fdx-merge from the repository's feeds, and
crafted variants of one of them, each made small (512-byte pages, vacuumed)
and self-contained (rollback journal, so the image is the whole store). The
random store identities and the timestamps are replaced by fixed values, so
the same tools write the same seeds.

Seeds that the store does not yet read safely go to tests/fuzz/pending/store,
which ctest does not replay; the others to tests/fuzz/corpus/store.

Usage: make_store_seeds.py FDX_INGEST FDX_MERGE
"""
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus", "store")
PENDING = os.path.join(ROOT, "tests", "fuzz", "pending", "store")

# Crafted seeds on which today's store crashes, hangs, writes lines the
# decoder rejects, or fails without a message.
PENDING_SEEDS = set()


def run(*argv, cwd=ROOT):
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def ingest(fdx_ingest, store, *feeds):
    run(fdx_ingest, "-q", "--threads", "1", store, *feeds)


def connect(path):
    return sqlite3.connect(path, isolation_level=None)


def normalise(path, name):
    """Fixed identity, timestamps and ledger times instead of random ones."""
    ident = hashlib.sha256(name.encode()).hexdigest()[:32]
    db = connect(path)
    db.execute("UPDATE store_identity SET id = ?, created_at = '2026-01-01T00:00:00.000Z'",
               (ident,))
    db.execute("UPDATE ingest_ledger SET committed_at = '2026-01-01T00:00:00.000Z'")
    db.execute("UPDATE merged_store SET merged_at = '2026-01-01T00:00:00.000Z'")
    db.execute("UPDATE dispatch_cell SET candidates_set_at = 1767225600000 "
               "WHERE candidates_set_at IS NOT NULL")
    db.close()


def compact(path):
    """One self-contained file of 512-byte pages."""
    db = connect(path)
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("PRAGMA page_size = 512")
    db.execute("VACUUM")
    db.close()


def real_stores(fdx_ingest, fdx_merge, tmp):
    """name -> path of stores made by the tools, normalised."""
    feeds = {
        "basic": ["tests/data/basic/input/run_0000", "tests/data/basic/input/run_0001"],
        "nasty": ["tests/data/nasty/input/run_0000"],
        "example": ["examples/runs/run_0000"],
        "misses_only": ["examples/runs/run_0001/misses.jsonl"],
        "dispatches_only": ["examples/runs/run_0002/dispatches.jsonl"],
    }
    stores = {}
    for name, paths in feeds.items():
        stores[name] = os.path.join(tmp, name + ".fdx")
        ingest(fdx_ingest, stores[name], *paths)
        normalise(stores[name], name)
    # A store holding two others, and one that holds it plus data of its own;
    # merged by name in tmp, so the paths they record do not depend on tmp.
    stores["merged"] = os.path.join(tmp, "merged.fdx")
    run(fdx_merge, "-q", "merged.fdx", "misses_only.fdx", "dispatches_only.fdx", cwd=tmp)
    normalise(stores["merged"], "merged")
    stores["merged_twice"] = os.path.join(tmp, "merged_twice.fdx")
    ingest(fdx_ingest, stores["merged_twice"], "tests/data/basic/input/run_0001")
    normalise(stores["merged_twice"], "merged_twice_own")
    run(fdx_merge, "-q", "merged_twice.fdx", "merged.fdx", cwd=tmp)
    normalise(stores["merged_twice"], "merged_twice")
    empty = os.path.join(tmp, "empty.fdx")
    ingest(fdx_ingest, empty, "/dev/null")
    normalise(empty, "empty")
    stores["empty"] = empty
    return stores


# Stands for one DROP VIEW per view the store has.
DROP_VIEWS = "-- drop every view"

# Seeds of older schema versions, which today's tools cannot write: they were
# written by the fdx of their version and are kept as they are (the writable
# pass of the target migrates them).
FROZEN = {"schema_version_2", "schema_version_3", "schema_version_4", "schema_version_5"}

# name -> SQL run on a copy of the basic store.
CRAFTED = {
    "view_miss_cell": [
        "ALTER TABLE miss_cell RENAME TO miss_cell_data",
        "CREATE VIEW miss_cell AS SELECT * FROM miss_cell_data",
    ],
    "view_null_wanted": [
        "ALTER TABLE miss_cell RENAME TO miss_cell_data",
        "CREATE VIEW miss_cell AS SELECT NULL AS wanted, backend, op, dtypes, kernel_source, "
        "kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version, count, "
        "first_ingest, last_ingest FROM miss_cell_data",
    ],
    "view_text_count": [
        "ALTER TABLE dispatch_cell RENAME TO dispatch_cell_data",
        "CREATE VIEW dispatch_cell AS SELECT keyed, structure_key, backend, op, dtypes, "
        "kernel_source, kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version, "
        "candidates, 'many' AS count, first_ingest, last_ingest, candidates_set_at "
        "FROM dispatch_cell_data",
    ],
    "view_endless": [
        "ALTER TABLE miss_cell RENAME TO miss_cell_data",
        "CREATE VIEW miss_cell AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
        "SELECT wanted, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major, "
        "cc_minor, hardware_sku, driver_version, count, first_ingest, last_ingest "
        "FROM miss_cell_data, n WHERE i < 0",
    ],
    "no_views": [
        DROP_VIEWS,
    ],
    "dtypes_newline": [
        "UPDATE miss_cell SET dtypes = '[\"F16\",' || char(10) || '\"F32\"]' "
        "WHERE wanted = (SELECT min(wanted) FROM miss_cell)",
    ],
    "dtypes_not_json": [
        "UPDATE dispatch_cell SET dtypes = 'F16,F16'",
    ],
    "candidates_not_json": [
        "UPDATE dispatch_cell SET candidates = '[{\"impl_id\":'",
    ],
    "wanted_not_utf8": [
        "UPDATE miss_cell SET wanted = CAST(x'41ff42' AS TEXT) "
        "WHERE wanted = (SELECT min(wanted) FROM miss_cell)",
    ],
    "count_zero": [
        "PRAGMA ignore_check_constraints = ON",
        "UPDATE miss_cell SET count = 0",
        "UPDATE dispatch_cell SET count = -3",
    ],
    "cc_out_of_range": [
        "PRAGMA ignore_check_constraints = ON",
        "UPDATE miss_cell SET cc_major = 5000000000, cc_minor = -7",
    ],
    "trigger": [
        "CREATE TRIGGER no_inserts BEFORE INSERT ON miss_cell "
        "BEGIN SELECT RAISE(ABORT, 'no inserts'); END",
        "CREATE TRIGGER no_reads AFTER UPDATE ON store_identity "
        "BEGIN DELETE FROM dispatch_cell; END",
    ],
    "missing_dispatch_cell": ["DROP TABLE dispatch_cell"],
    "missing_store_identity": ["DROP TABLE store_identity"],
    "missing_merged_store": ["DROP TABLE merged_store"],
    "empty_store_identity": ["DELETE FROM store_identity"],
    "schema_version_newer": ["PRAGMA user_version = 99"],
    # What a merge checks of a source's history.
    "history_short": ["DELETE FROM cell_history WHERE cell = (SELECT min(cell) FROM cell_history)"],
    "history_origin_not_identity": [
        "INSERT INTO history_origin VALUES (7, 'not an identity')",
        "UPDATE cell_history SET origin = 7 WHERE cell = (SELECT min(cell) FROM cell_history)",
    ],
    "history_unknown_origin": [
        "UPDATE cell_history SET origin = 9 WHERE cell = (SELECT min(cell) FROM cell_history)",
    ],
    "cell_id_shared": [
        "UPDATE dispatch_cell SET cell_id = (SELECT min(cell_id) FROM miss_cell) "
        "WHERE cell_id = (SELECT min(cell_id) FROM dispatch_cell)",
    ],
    "foreign_application_id": ["PRAGMA application_id = 42"],
}


def craft(base, path, statements):
    shutil.copyfile(base, path)
    db = connect(path)
    db.execute("PRAGMA journal_mode = DELETE")
    for sql in statements:
        if sql == DROP_VIEWS:
            views = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'view'")]
            for v in views:
                db.execute(f'DROP VIEW "{v}"')
        else:
            db.execute(sql)
    db.close()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    fdx_ingest, fdx_merge = (os.path.abspath(p) for p in sys.argv[1:])
    os.makedirs(CORPUS, exist_ok=True)
    os.makedirs(PENDING, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="fdx-store-seeds-")
    try:
        seeds = real_stores(fdx_ingest, fdx_merge, tmp)
        for path in seeds.values():
            compact(path)
        # As copied from a host: the header says WAL, the -wal file is gone.
        seeds["wal_image"] = os.path.join(tmp, "wal_image.fdx")
        shutil.copyfile(seeds["basic"], seeds["wal_image"])
        connect(seeds["wal_image"]).execute("PRAGMA journal_mode = WAL").fetchall()
        for name, statements in CRAFTED.items():
            seeds[name] = os.path.join(tmp, "crafted_" + name + ".fdx")
            craft(seeds["basic"], seeds[name], statements)
            compact(seeds[name])
        for name, path in sorted(seeds.items()):
            if name in FROZEN:
                continue
            out = PENDING if name in PENDING_SEEDS else CORPUS
            shutil.copyfile(path, os.path.join(out, name + ".fdx"))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
