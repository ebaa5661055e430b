#!/usr/bin/env python3
"""The merge peer: fdx-merge's fold written in plain SQL. DST gets the cell
tables of the first SRC (their CREATE statements, so the same keys); then, in
one transaction, the cells of each SRC (at most 10, all attached first) are upserted with
INSERT ... SELECT ... ON CONFLICT: counts add, a dispatch cell keeps the
candidates list set later (an empty list never replaces one). No ledger, no
identities, no check against merging a store twice.

Usage: sql_merge.py DST SRC...
"""
import sqlite3
import sys

CELLS = ("miss_cell", "dispatch_cell")
UPSERT = {
    "miss_cell": """
        INSERT INTO miss_cell SELECT * FROM {src}.miss_cell WHERE true
        ON CONFLICT DO UPDATE SET count = count + excluded.count,
                                  last_ingest = excluded.last_ingest""",
    "dispatch_cell": """
        INSERT INTO dispatch_cell SELECT * FROM {src}.dispatch_cell WHERE true
        ON CONFLICT DO UPDATE SET
            count = count + excluded.count,
            candidates = CASE WHEN excluded.candidates <> '[]' AND (candidates = '[]' OR
                coalesce(excluded.candidates_set_at, -1) > coalesce(candidates_set_at, -1))
                THEN excluded.candidates ELSE candidates END,
            candidates_set_at = CASE WHEN excluded.candidates <> '[]' AND (candidates = '[]' OR
                coalesce(excluded.candidates_set_at, -1) > coalesce(candidates_set_at, -1))
                THEN excluded.candidates_set_at ELSE candidates_set_at END,
            last_ingest = excluded.last_ingest""",
}


def main():
    if len(sys.argv) < 3:
        raise SystemExit("usage: sql_merge.py DST SRC...")
    dst, srcs = sys.argv[1], sys.argv[2:]
    db = sqlite3.connect(dst, isolation_level=None)
    # The page size fdx gives a new store (sql/page_size.sql), so that the two
    # folds write the same pages.
    db.execute("PRAGMA page_size = 8192")
    db.execute("PRAGMA journal_mode = WAL")
    first = sqlite3.connect(srcs[0])
    for (sql,) in first.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name "
                                "IN (?, ?)", CELLS):
        db.execute(sql)
    first.close()
    # SQLite attaches at most 10 databases and not inside a transaction.
    if len(srcs) > 10:
        raise SystemExit("sql_merge.py: at most 10 sources")
    for i, src in enumerate(srcs):
        db.execute(f"ATTACH DATABASE ? AS s{i}", (src,))
    db.execute("BEGIN")
    for i in range(len(srcs)):
        for t in CELLS:
            db.execute(UPSERT[t].format(src=f"s{i}"))
    db.execute("COMMIT")
    db.close()


if __name__ == "__main__":
    main()
