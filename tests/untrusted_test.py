#!/usr/bin/env python3
"""Stores read from elsewhere are untrusted, and readers never change them.

Crafted stores (a forged extra line in dtypes, dtypes that are not JSON,
strings that are not UTF-8, a recursive view or a view over a huge blob in
place of miss_cell, a trigger added, a table missing) make fdx-export, fdx-top
and fdx-merge (as a source) exit 1 within a bounded time, with a message
naming the file and what is wrong, and never write a line fdx-ingest would
reject. A zero-length file and a rollback-journal store are left exactly as
they were by every reader; a failed first ingest or merge leaves no store
behind. On read-only media (a tmpfs remounted read-only; skipped where
mounting is not permitted) a store whose last commit is still in its -wal
without a -shm is refused clearly, and a path starting with '//' reads.

Usage: untrusted_test.py FDX_INGEST FDX_EXPORT FDX_TOP FDX_MERGE DATA_DIR
"""
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from testlib import check, finish, run_bounded, skip

TIMEOUT = int(os.environ.get("FDX_TEST_TIMEOUT", "60"))  # far longer than a run needs


def run(cmd):
    return run_bounded(cmd, TIMEOUT)


def digest(path):
    """The store's bytes, with its -wal and -journal (a missing -wal is an empty one:
    SQLite readers of a WAL store leave an empty -wal and a -shm beside it)."""
    h = hashlib.sha256()
    for suffix in ("", "-wal", "-journal"):
        h.update(suffix.encode())
        if os.path.exists(path + suffix):
            h.update(open(path + suffix, "rb").read())
    return h.hexdigest()


def expect_failure(p, what, *needles):
    check(p.returncode == 1, f"{what}: exit {p.returncode}, want 1", p.stderr)
    if os.environ.get("FDX_TEST_VERBOSE"):
        print(f"{what}: {p.stderr.strip()}")
    for n in needles:
        check(n in p.stderr, f"{what}: message lacks {n!r}", p.stderr)


def main():
    ingest, export, top, merge, data = sys.argv[1:6]
    with tempfile.TemporaryDirectory(prefix="fdx-untrusted-") as tmp:
        j = lambda *p: os.path.join(tmp, *p)
        base = j("base.db")
        p = run([ingest, "-q", base] + [os.path.join(data, "basic", "input", r) for r in ("run_0000", "run_0001")])
        check(p.returncode == 0, "seed ingest", p.stderr)
        p = run([export, base, j("base-out")])
        check(p.returncode == 0, "seed export", p.stderr)

        def crafted(name, *sql):
            path = j(name + ".db")
            shutil.copy(base, path)
            con = sqlite3.connect(path, isolation_level=None)
            for s in sql:
                con.execute(s)
            con.close()
            return path

        endless = ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                   "SELECT 'w' || n AS wanted, 'b' AS backend, 'o' AS op, '[]' AS dtypes, "
                   "'k' AS kernel_source, 0 AS kernel_revision_hash, -1 AS cc_major, "
                   "-1 AS cc_minor, 's' AS hardware_sku, 'd' AS driver_version, 1 AS count, "
                   "1 AS first_ingest, 1 AS last_ingest FROM r")
        huge = ("SELECT hex(zeroblob(400000000)) AS wanted, 'b' AS backend, 'o' AS op, "
                "'[]' AS dtypes, 'k' AS kernel_source, 0 AS kernel_revision_hash, "
                "-1 AS cc_major, -1 AS cc_minor, 's' AS hardware_sku, 'd' AS driver_version, "
                "1 AS count, 1 AS first_ingest, 1 AS last_ingest")
        # The tail of the exported line after dtypes completes the forged record.
        forged = ('["F16"]}}\n{"schema":2,"wanted":"forged","fallback":{"backend":"B",'
                  '"op":"O","dtypes":["F16"]')
        cases = {
            "forged-line": (["UPDATE miss_cell SET dtypes = ?"], "dtypes", forged),
            "non-json-dtypes": (["UPDATE miss_cell SET dtypes = 'F16'"], "dtypes", None),
            "spaced-dtypes": (["UPDATE miss_cell SET dtypes = '[ \"F16\" ]'"], "dtypes", None),
            "bad-utf8": (["UPDATE miss_cell SET wanted = CAST(X'77FF' AS TEXT)"], "UTF-8", None),
            "bad-candidates": (["UPDATE dispatch_cell SET candidates = '[1]'"], "candidates",
                               None),
            "bad-keyed": (["PRAGMA ignore_check_constraints = ON",
                           "UPDATE dispatch_cell SET keyed = 0 WHERE keyed = 1"],
                          "structure_key", None),
            "zero-count": (["PRAGMA ignore_check_constraints = ON",
                            "UPDATE miss_cell SET count = 0"], "count", None),
            "half-cc": (["PRAGMA ignore_check_constraints = ON",
                            "UPDATE miss_cell SET cc_major = 2, cc_minor = -1"],
                        "cc_minor", None),
            "nul-string": (["UPDATE miss_cell SET hardware_sku = CAST(X'610062' AS TEXT)"],
                           "U+0000", None),
            "recursive-view": (["ALTER TABLE miss_cell RENAME TO old_cell",
                                f"CREATE VIEW miss_cell AS {endless}"], "miss_cell", None),
            "zeroblob-view": (["ALTER TABLE miss_cell RENAME TO old_cell",
                               f"CREATE VIEW miss_cell AS {huge}"], "miss_cell", None),
            "trigger": (["CREATE TRIGGER t AFTER INSERT ON miss_cell BEGIN SELECT 1; END"],
                        "trigger t", None),
            "index": (["CREATE INDEX i ON dispatch_cell (count)"], "index i", None),
            "missing-table": (["DROP TABLE merged_store"], "merged_store", None),
        }
        for name, (sql, needle, arg) in cases.items():
            path = j(name + ".db")
            shutil.copy(base, path)
            con = sqlite3.connect(path, isolation_level=None)
            for s in sql:
                con.execute(s, (arg,) if "?" in s else ())
            con.close()
            before = digest(path)
            out = j("out-" + name)
            p = run([export, path, out])
            expect_failure(p, f"export of a store with {name}", path, needle)
            for f in (os.listdir(out) if os.path.isdir(out) else []):
                q = run([ingest, "-q", j("reingest-" + name + ".db"), os.path.join(out, f)])
                check(q.returncode == 0, f"export of {name}: {f} holds a line ingest rejects",
                      q.stderr)
            # One feed to standard output is read and checked the same way.
            refused = 0
            for kind in ("misses", "dispatches"):
                p = run([export, path, "-", "--kind", kind])
                if p.returncode != 0:
                    expect_failure(p, f"export - --kind {kind} of a store with {name}", path, needle)
                    refused += 1
                    continue
                feed = j(f"stdout-{name}-{kind}.jsonl")
                with open(feed, "w") as f:
                    f.write(p.stdout)
                q = run([ingest, "-q", j(f"reingest-stdout-{name}.db"), feed])
                check(q.returncode == 0, f"export - of {name}: {kind} holds a line ingest rejects",
                      q.stderr)
            check(refused >= 1, f"export - of a store with {name}: neither kind refused")
            if name not in ("bad-candidates", "bad-keyed"):
                # fdx-top reads only miss_cell (and checks the whole schema).
                expect_failure(run([top, path]), f"fdx-top of a store with {name}", path, needle)
            dst = j("dst-" + name + ".db")
            p = run([merge, dst, path])
            expect_failure(p, f"merge from a store with {name}", path, needle)
            check(not os.path.exists(dst), f"failed merge from {name} left {dst} behind")
            check(digest(path) == before, f"readers changed the store with {name}")

        # A zero-length file is not a store, and stays zero-length.
        empty = j("empty.db")
        open(empty, "wb").close()
        for what, cmd in (("export", [export, empty, j("empty-out")]), ("top", [top, empty]),
                          ("merge source", [merge, j("dst-empty.db"), empty])):
            expect_failure(run(cmd), f"{what} of a zero-length file", empty, "not an fdx store")
            check(os.path.getsize(empty) == 0 and not os.path.exists(empty + "-wal"),
                  f"{what} left the zero-length file as it was")
        check(not os.path.exists(j("dst-empty.db")), "failed merge left its new store behind")
        expect_failure(run([export, j("none.db"), j("none-out")]), "export of a missing file",
                       "no such")
        check(not os.path.exists(j("none.db")), "export created a store")

        # A store in rollback-journal mode is read, not converted to WAL.
        rollback = j("rollback.db")
        shutil.copy(base, rollback)
        con = sqlite3.connect(rollback, isolation_level=None)
        con.execute("PRAGMA journal_mode = DELETE")
        con.close()
        before = digest(rollback)
        p = run([export, rollback, j("rollback-out")])
        check(p.returncode == 0, "export of a rollback-journal store", p.stderr)
        check(open(j("rollback-out", "misses.jsonl")).read() ==
              open(j("base-out", "misses.jsonl")).read(), "rollback-journal store exported")
        check(run([top, rollback]).returncode == 0, "fdx-top of a rollback-journal store")
        p = run([merge, "-q", j("dst-rollback.db"), rollback])
        check(p.returncode == 0, "merge from a rollback-journal store", p.stderr)
        check(digest(rollback) == before, "readers left the rollback-journal store as it was")

        # An older schema is not migrated by a reader.
        older = crafted("older", "PRAGMA user_version = 2")
        before = digest(older)
        expect_failure(run([export, older, j("older-out")]), "export of an older store",
                       older, "open it writable once")
        check(digest(older) == before, "export left an older store as it was")

        # A writer that fails before its first commit leaves no store behind.
        for what, args in (("a missing feed", [j("missing.jsonl")]),
                           ("a bad line", [j("bad.jsonl")])):
            open(j("bad.jsonl"), "w").write('{"schema":2}\n')
            new = j("new.db")
            p = run([ingest, new] + args)
            expect_failure(p, f"first ingest of {what}", "unchanged" if "bad" in what else "")
            left = [n for n in os.listdir(tmp) if n.startswith("new.db")]
            check(not left, f"failed first ingest of {what} left {left}")
        # ... but a store some other writer committed into meanwhile is kept.
        kept = j("kept.db")
        p = run([ingest, "-q", kept, os.path.join(data, "basic", "input", "run_0000")])
        check(p.returncode == 0 and os.path.exists(kept), "a successful first ingest keeps its store")

        readonly_media(j, base, export, top)
    return finish("untrusted")


def readonly_media(j, base, export, top):
    fs = j("ro-fs")
    os.makedirs(fs)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", fs],
                       capture_output=True, text=True)
    if p.returncode != 0:
        skip(5, f"read-only media checks: cannot mount a tmpfs ({p.stderr.strip()})")
        return
    try:
        # The last commit still in the -wal, no -shm.
        live = j("live.db")
        shutil.copy(base, live)
        con = sqlite3.connect(live, isolation_level=None)
        con.execute("PRAGMA wal_autocheckpoint = 0")
        con.execute("UPDATE miss_cell SET count = count + 1000")
        shutil.copy(live, os.path.join(fs, "wal.db"))
        shutil.copy(live + "-wal", os.path.join(fs, "wal.db-wal"))
        con.close()
        shutil.copy(base, os.path.join(fs, "clean.db"))
        subprocess.run(["mount", "-o", "remount,ro", fs], check=True)
        wal = os.path.join(fs, "wal.db")
        p = run([export, wal, j("wal-out")])
        expect_failure(p, "export of a store with its last commit in the -wal on read-only media",
                       wal, "-wal")
        expect_failure(run([top, wal]), "fdx-top of the same", wal, "-wal")
        clean = os.path.join(fs, "clean.db")
        p = run([export, clean, j("clean-out")])
        check(p.returncode == 0, "export of a store on read-only media", p.stderr)
        p = run([export, "/" + os.path.abspath(clean), j("slash-out")])
        check(p.returncode == 0, "export of a '//' path on read-only media", p.stderr)
        check(os.path.exists(j("slash-out", "misses.jsonl")) and
              open(j("slash-out", "misses.jsonl")).read() ==
              open(j("base-out", "misses.jsonl")).read(), "'//' path exported the store")
    finally:
        subprocess.run(["umount", "-l", fs])


if __name__ == "__main__":
    sys.exit(main())
