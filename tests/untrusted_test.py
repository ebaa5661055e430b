#!/usr/bin/env python3
"""Stores read from elsewhere are untrusted, and readers never change them.

Crafted stores (a forged extra line in dtypes, dtypes that are not JSON,
strings that are not UTF-8, a recursive view or a view over a huge blob in
place of miss_cell, a trigger added, a table missing) make fdx-export, fdx-top,
fdx-diff (either side) and fdx-merge (as a source) exit 1 within a bounded time, with a message
naming the file and what is wrong, and never write a line fdx-ingest would
reject. A zero-length file and a rollback-journal store are left exactly as
they were by every reader; a failed first ingest or merge leaves no store
behind. On read-only media (a tmpfs remounted read-only; skipped where
mounting is not permitted) a store whose last commit is still in its -wal
without a -shm is refused clearly, and a path starting with '//' reads. In a
directory the reader cannot write (as nobody when run as root), fdx-export,
fdx-top, fdx-diff and fdx-merge read a WAL store as a writable copy reads, a
last commit still in the -wal is refused (through a symlink too), and a store
that changes under such a read (read without locks) fails it, keeping the
previous export. A store path longer than SQLite opens is named as such. A
store written to whose history settings would overflow
(a crafted next cell id or day, a cell or tombstone id at or past the next
one) is refused. A table whose keys are out of order (its file edited in
place) is neither exported, merged nor ranked; a history row or a tombstone
naming an id no fdx store would is refused by the readers of the history;
a store (or an empty file) whose text is UTF-16 is refused by every tool.
A store path that starts with
"file:" names that file,
never a URI. No output is written over the store's files, a symlink or a
device. A negative schema version, a -wal, -shm or -journal that is a FIFO,
a directory or a symlink, a candidates_set_at no capture has, two cells of
one kind sharing an id, and a hot journal beside a dry run are refused by
every tool they reach, naming the cause; a history origin numbered far out
costs a merge no memory for the numbers between.

Usage: untrusted_test.py FDX_INGEST FDX_EXPORT FDX_TOP FDX_MERGE DATA_DIR
"""
import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile

from testlib import check, finish, make_hot_journal, run_bounded, skip

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


def altered(path, *statements, src=None):
    """Runs statements (SQL, or (SQL, parameters)) on the store at path, a copy
    of src when given; returns the store's digest after them."""
    if src:
        shutil.copy(src, path)
    con = sqlite3.connect(path, isolation_level=None)
    for statement in statements:
        con.execute(*((statement,) if isinstance(statement, str) else statement))
    con.close()
    return digest(path)


def expect_failure(p, what, *needles):
    check(p.returncode == 1, f"{what}: exit {p.returncode}, want 1", p.stderr)
    if os.environ.get("FDX_TEST_VERBOSE"):
        print(f"{what}: {p.stderr.strip()}")
    for n in needles:
        check(n in p.stderr, f"{what}: message lacks {n!r}", p.stderr)


def main():
    ingest, export, top, merge, data = sys.argv[1:6]
    diff = os.path.join(os.path.dirname(export), "fdx-diff")
    prune = os.path.join(os.path.dirname(export), "fdx-prune")
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
            for pair in ((path, base), (base, path)):
                expect_failure(run([diff, *pair]), f"fdx-diff {' '.join(pair)}", path, needle)
            expect_failure(run([prune, "-n", "--op", "NoSuchOp", path]),
                           f"fdx-prune -n of a store with {name}", path, needle)
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
        # Nor is a FIFO (SQLite's open waited on it for a writer) or a device.
        fifo = j("fifo.db")
        os.mkfifo(fifo)
        for path in (fifo, "/dev/null"):
            for what, cmd in (("export", [export, path, j("fifo-out")]), ("top", [top, path]),
                              ("ingest", [ingest, path, os.path.join(data, "basic", "input")]),
                              ("merge", [merge, path, base]),
                              ("merge source", [merge, j("dst-fifo.db"), path])):
                expect_failure(run_bounded(cmd, 10), f"{what} of {path}", path,
                               "not a regular file")
        check(not os.path.exists(j("dst-fifo.db")), "failed merge from a FIFO left its store")
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

        long_paths(j, data, ingest)
        crafted_history_settings(j, base, ingest, merge, data)
        crafted_history_and_ledger(j, base, ingest, merge)
        keys_out_of_order(j, ingest, export, merge, top)
        tombstones_naming_other_ids(j, base, ingest, merge, top, prune)
        crafted_pruned_history_merged(j, ingest, merge, prune)
        utf16_store(j, base, ingest, export, top, merge)
        outputs_beside_the_store(j, base, export, ingest, data)
        uri_shaped_paths(j, data, ingest, export, merge)
        readonly_media(j, base, export, top)
        readonly_directory(j, base, export, top, merge, ingest)
        crafted_header_version(j, base, ingest, export, top, merge, prune)
        companions_not_files(j, base, ingest, export, top, merge, diff, prune)
        crafted_values_merge_keeps(j, base, merge)
        shared_ids_within_a_kind(j, base, top, prune)
        dry_run_beside_a_hot_journal(j, base, prune)
        dry_run_beside_a_wal(j, base, prune)
        diff_other_replaced(j, base, diff)
    return finish("untrusted")


def crafted_header_version(j, base, ingest, export, top, merge, prune):
    """A negative schema version (an fdx store's application id) indexed the
    migrations before the first: the writers read outside them, ran what they
    found as a migration, or crashed. Every tool refuses it as not a store."""
    for version in (-1, -2147483648):
        path = j(f"version{version}.db")
        before = altered(path, f"PRAGMA user_version = {version}", "CREATE TABLE mine (a)",
                         src=base)
        for what, cmd in (("fdx-ingest", [ingest, path, "/dev/null"]),
                          ("fdx-export", [export, path, j("version-out")]),
                          ("fdx-top", [top, path]), ("fdx-merge into", [merge, path, base]),
                          ("fdx-merge from", [merge, j("version-fleet.db"), path]),
                          ("fdx-prune", [prune, "--op", "x", path])):
            expect_failure(run(cmd), f"{what} of schema version {version}", path,
                           f"not an fdx store (store schema version {version})")
        check(digest(path) == before, f"the store of schema version {version} is as it was")


def companions_not_files(j, base, ingest, export, top, merge, diff, prune):
    """SQLite opens the files beside a store itself: a FIFO named as its
    -journal made every tool wait for ever (the look for a hot journal opens
    it), and a directory or a symlink there failed with a message that named
    another cause. Each tool refuses it, naming it, and changes nothing."""
    for suffix in ("-journal", "-wal", "-shm"):
        for kind, make, needle in (("fifo", os.mkfifo, "not a regular file"),
                                   ("dir", os.mkdir, "is a directory"),
                                   ("link", lambda p: os.symlink(base, p), "symbolic link")):
            path = j(f"companion-{kind}{suffix}.db")
            shutil.copy(base, path)
            make(path + suffix)
            before = open(path, "rb").read()  # digest() would open the FIFO
            for what, cmd in (("fdx-ingest", [ingest, path, "/dev/null"]),
                              ("fdx-export", [export, path, j("companion-out")]),
                              ("fdx-top", [top, path]), ("fdx-diff", [diff, path, base]),
                              ("fdx-merge into", [merge, path, base]),
                              ("fdx-merge from", [merge, j("companion-fleet.db"), path]),
                              ("fdx-prune -n", [prune, "-n", "--op", "x", path])):
                expect_failure(run_bounded(cmd, 20), f"{what} beside a {kind} {suffix}",
                               path + suffix, needle)
            if kind == "dir" and suffix != "-shm":
                # a store about to be made (-shm comes only with WAL, after its first commit)
                new = j(f"companion-new-{kind}{suffix}.db")
                os.mkdir(new + suffix)
                for what, cmd in (("fdx-ingest", [ingest, new, "/dev/null"]),
                                  ("fdx-merge into", [merge, new, base])):
                    expect_failure(run(cmd), f"{what} of a new store beside a {kind} {suffix}",
                                   new + suffix, needle)
                check(not os.path.exists(new), f"no new store beside a {kind} {suffix}")
            check(open(path, "rb").read() == before and
                  os.path.lexists(path + suffix) and
                  not stat.S_ISREG(os.lstat(path + suffix).st_mode),
                  f"the store beside a {kind} {suffix} is as it was")
            check(not os.path.exists(j("companion-fleet.db")), "a failed merge made no target")


def crafted_values_merge_keeps(j, base, merge):
    """fdx-merge keeps the later of two candidates lists by candidates_set_at:
    a crafted time past 9999 (or before 1970) pinned a list in the fleet for
    good. An origin numbered far out made the merge allocate memory up to its
    number (545 MB for 2^24)."""
    first = "(SELECT min(structure_key) FROM dispatch_cell)"
    for name, value in (("far-future", 2 ** 63 - 1), ("after-9999", 253402300800000),
                        ("before-1970", -1)):
        path = j(f"set-at-{name}.db")
        before = altered(path, (f"UPDATE dispatch_cell SET candidates_set_at = ? WHERE "
                                f"structure_key = {first}", (value,)), src=base)
        dst = j(f"set-at-{name}-fleet.db")
        expect_failure(run([merge, dst, path]), f"merge of a candidates_set_at {name}", path,
                       "candidates_set_at")
        check(not os.path.exists(dst), f"a failed merge of {name} made no target")
        check(digest(path) == before, f"the store with a candidates_set_at {name} is as it was")
    path = j("far-origin.db")
    altered(path, "INSERT INTO history_origin VALUES (16777216, '0123456789abcdef0123456789abcdef')",
            src=base)
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen([merge, "-q", j("far-origin-fleet.db"), path], stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        err.seek(0)
        check(os.waitstatus_to_exitcode(status) == 0,
              "merge of a store with an origin numbered 2^24", err.read().decode(errors="replace"))
    # 545 MB before; a sanitizer's shadow memory stays far below the bound
    check(usage.ru_maxrss < 200 * 1024,
          f"merge of an origin numbered 2^24 peaked at {usage.ru_maxrss} KiB")


def shared_ids_within_a_kind(j, base, top, prune):
    """Two cells of one kind sharing a cell id (the unique index's text kept,
    its rows edited) passed quick_check, and the readers of the history showed
    one cell's history as the other's."""
    report = os.path.join(os.path.dirname(top), "fdx-report")
    for table in ("miss_cell", "dispatch_cell"):
        path = j(f"shared-{table}.db")
        shutil.copy(base, path)
        index = f"{table}_by_id"
        con = sqlite3.connect(path, isolation_level=None)
        sql = con.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (index,)).fetchone()[0]
        con.execute("PRAGMA writable_schema = ON")
        con.execute("UPDATE sqlite_schema SET sql = ? WHERE name = ?",
                    (sql.replace("UNIQUE ", ""), index))
        con.close()
        con = sqlite3.connect(path, isolation_level=None)
        a, b = [r[0] for r in con.execute(f"SELECT cell_id FROM {table} ORDER BY cell_id LIMIT 2")]
        con.execute(f"UPDATE {table} SET cell_id = ? WHERE cell_id = ?", (a, b))
        con.execute("PRAGMA writable_schema = ON")
        con.execute("UPDATE sqlite_schema SET sql = ? WHERE name = ?", (sql, index))
        con.close()
        check(sqlite3.connect(path).execute("PRAGMA quick_check").fetchone()[0] == "ok",
              f"quick_check passes the shared {table} id")
        before = digest(path)
        for what, cmd in (("fdx-top --since", [top, "--since", "2000-01-01", path]),
                          ("fdx-top --growth", [top, "--growth", "7d", path]),
                          ("fdx-report", [report, path, j("shared.html")]),
                          ("fdx-prune -n", [prune, "-n", "--op", "x", path])):
            expect_failure(run(cmd), f"{what} of a store whose {table} share an id", path,
                           f"{table}: two cells share the cell id {a}")
        check(digest(path) == before, f"the store whose {table} share an id is as it was")


def dry_run_beside_a_hot_journal(j, base, prune):
    """fdx-prune -n opened the store writable, which rolled back the hot
    journal a killed writer left: a dry run changed the store (and with a
    journal from another database, damaged it). It refuses as a reader does."""
    path = j("hot.db")
    shutil.copy(base, path)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = DELETE")
    con.close()
    make_hot_journal(path, 2000)
    before = digest(path)
    expect_failure(run([prune, "-n", "--op", "x", path]), "fdx-prune -n beside a hot journal",
                   path, "does not roll back", "one copied from another store")
    check(digest(path) == before and os.path.exists(path + "-journal"),
          "a dry run left the store and its hot journal as they were")
    # through a symlink, the journal named is the one beside the store
    link = j("hot-link.db")
    os.symlink(path, link)
    expect_failure(run([prune, "-n", "--op", "x", link]), "fdx-prune -n of a symlink beside a "
                   "hot journal", os.path.realpath(path) + "-journal")
    check(digest(path) == before, "a dry run through a symlink left the store as it was")
    p = run([prune, "--op", "x", path])
    check(p.returncode == 0, "fdx-prune (not a dry run) rolls the hot journal back", p.stderr)


def dry_run_beside_a_wal(j, base, prune):
    """fdx-prune -n's close, the store's last connection, checkpointed the
    commits of its -wal into the file and removed the -wal: a dry run
    rewrote the store (and made a -wal from elsewhere part of it for good).
    It leaves the store's files as a reader does."""
    path = j("dry-wal.db")
    with_commit_in_wal(base, j("dry-wal-work.db"), path)
    before = (digest(path), digest(path + "-wal"))
    p = run([prune, "-n", "--op", "NoSuchOp", path])
    check(p.returncode == 0, "fdx-prune -n of a store with commits in its -wal", p.stderr)
    check(os.path.exists(path + "-wal") and (digest(path), digest(path + "-wal")) == before,
          "a dry run left the store and its -wal as they were")


def long_paths(j, data, ingest):
    """SQLite opens a database whose full path is at most 504 bytes (its 512,
    less room for "-journal"); past that, fdx says so instead of SQLite's
    "unable to open database file"."""
    d = os.path.realpath(j("long", "a" * 200, "b" * 200))
    os.makedirs(d)
    feed = os.path.join(data, "basic", "input", "run_0000")
    for length, want in ((504, 0), (505, 1)):
        path = os.path.join(d, "c" * (length - len(d) - 4) + ".db")
        p = run([ingest, "-q", path, feed])
        check(p.returncode == want and (want == 0 or "at most 504 bytes" in p.stderr),
              f"a store path of {length} bytes", p.stderr)
        check(os.path.exists(path) == (want == 0), f"a store path of {length} bytes: its file")
    # The limit is on the path SQLite opens: a long link to a short path opens,
    # a short link to a long path is named, and :memory: has no path.
    short = j("short.db")
    check(run([ingest, "-q", short, feed]).returncode == 0, "a store with a short path")
    link = os.path.join(d, "l" * (510 - len(d)))
    os.symlink(short, link)
    p = run([ingest, "-q", link, feed])
    check(p.returncode == 0, "a long link to a short path", p.stderr)
    longer = os.path.join(d, "c" * (505 - len(d) - 4) + ".db")
    shutil.copy(short, longer)
    os.symlink(longer, j("to-long.db"))
    p = run([ingest, "-q", j("to-long.db"), feed])
    check(p.returncode == 1 and "at most 504 bytes" in p.stderr, "a short link to a long path",
          p.stderr)
    p = subprocess.run([ingest, "-q", ":memory:", feed], cwd=d, capture_output=True, text=True,
                       timeout=TIMEOUT)
    check(p.returncode == 0, ":memory: from a deep directory", p.stderr)
    # A feed's path past 1 KiB was cut in messages: a bad line named a file
    # that is not there, and a missing file's message lost its reason.
    deep = os.path.realpath(j("long", *(["e" * 250] * 5)))
    os.makedirs(deep)
    bad = os.path.join(deep, "bad.jsonl")
    with open(bad, "w") as f:
        f.write('{"schema":2,"wanted":"w","fallback":{"backend":"Cuda","op":"Gelu","dtypes":'
                '["F16"],"kernel_source":"k","kernel_revision_hash":1},"count":-3,"hw":'
                '{"hardware_sku":"S","driver_version":"1"}}\n')
    p = run([ingest, j("deep-feed.db"), bad])
    check(p.returncode == 1 and f"{bad}:1: count:" in p.stderr,
          "a bad line of a feed whose path is over 1 KiB is named whole", p.stderr)
    p = run([ingest, j("deep-feed.db"), os.path.join(deep, "missing.jsonl")])
    check(p.returncode == 1 and "missing.jsonl: No such file or directory" in p.stderr,
          "a missing feed whose path is over 1 KiB keeps its reason", p.stderr)


def crafted_history_settings(j, base, ingest, merge, data):
    """A store written to (or merged into) whose history_config no fdx wrote:
    a next cell id at 2^63-1 overflowed into negative ids, and a latest day
    near -2^63 overflowed the day arithmetic. Refused, the store unchanged;
    and so by the readers that sum the history."""
    feed = [os.path.join(data, "nasty", "input", "run_0000")]
    for column, value in (("next_cell_id", 2**63 - 1), ("next_cell_id", 0),
                          ("latest_day", -2**63 + 5), ("latest_day", 10**12),
                          ("daily_days", 2**62), ("rolled_before", 17)):
        path = j(f"hist-{column}-{value}.db")
        before = altered(path, (f"UPDATE history_config SET {column} = ?", (value,)), src=base)
        expect_failure(run([ingest, path] + feed), f"ingest into a store with {column} {value}",
                       path, f"history_config.{column}")
        expect_failure(run([merge, path, base]), f"merge into a store with {column} {value}",
                       path, f"history_config.{column}")
        tools = os.path.dirname(ingest)
        for what, cmd in (("fdx-top --since", ["fdx-top", "--since", "2000-01-01", path]),
                          ("fdx-top --growth", ["fdx-top", "--growth", "7d", path]),
                          ("fdx-report", ["fdx-report", path, j("hist.html")]),
                          ("fdx-prune -n", ["fdx-prune", "-n", "--op", "NoSuchOp", path])):
            cmd[0] = os.path.join(tools, cmd[0])
            expect_failure(run(cmd), f"{what} of a store with {column} {value}", path,
                           f"history_config.{column}")
        check(digest(path) == before, f"the store with {column} {value} is as it was")
    # No settings row: a merge from it said its rolled_before was not the
    # first day of a month.
    path = j("hist-missing.db")
    before = altered(path, "DELETE FROM history_config", src=base)
    expect_failure(run([merge, j("hist-missing-fleet.db"), path]),
                   "merge from a store without history settings", path,
                   "the history settings are missing")
    check(digest(path) == before, "the store without history settings is as it was")
    # A REAL, once the table's STRICT is taken away: read as an integer, half
    # a day moved the growth window by a day.
    path = j("hist-latest-real.db")
    shutil.copy(base, path)
    con = sqlite3.connect(path, isolation_level=None)
    sql = con.execute("SELECT sql FROM sqlite_schema WHERE name = 'history_config'").fetchone()[0]
    lax = sql.replace(") STRICT", ")").replace("latest_day    INTEGER", "latest_day    BLOB")
    check(lax != sql, "history_config's STRICT and column type taken away")
    con.execute("PRAGMA writable_schema = ON")
    con.execute("UPDATE sqlite_schema SET sql = ? WHERE name = 'history_config'", (lax,))
    con.close()
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("UPDATE history_config SET latest_day = latest_day + 0.5")
    con.execute("PRAGMA writable_schema = ON")
    con.execute("UPDATE sqlite_schema SET sql = ? WHERE name = 'history_config'", (sql,))
    con.close()
    before = digest(path)
    tools = os.path.dirname(ingest)
    for what, cmd in (("fdx-top --growth", [os.path.join(tools, "fdx-top"), "--growth", "1d",
                                            path]),
                      ("fdx-ingest", [ingest, path] + feed),
                      ("fdx-merge", [merge, j("hist-real-fleet.db"), path])):
        expect_failure(run(cmd), f"{what} of a store with a REAL latest_day", path,
                       "history_config.latest_day")
    check(digest(path) == before, "the store with a REAL latest_day is as it was")


def crafted_history_and_ledger(j, base, ingest, merge):
    """The readers that sum a store's history (fdx-top's windows and growth,
    fdx-report, fdx-prune) and its ledger (fdx-report, fdx-merge) check it as
    fdx-merge checks a source's: a negative day count printed as 2^64-1000, a
    cell id two cells shared showed one cell's history as the other's, a
    negative ledger count was summed into the report. Each is refused, naming
    the store, which is left as it was. Writers refuse a cell id at or past
    the next one, which they would give a new cell a second time."""
    tools = os.path.dirname(ingest)
    top, report, prune = (os.path.join(tools, t) for t in ("fdx-top", "fdx-report", "fdx-prune"))
    lax = "PRAGMA ignore_check_constraints = ON"
    new_cell = one_miss_per_key(j("history-new-cell.jsonl"), ("brand:new",))
    first_miss = "(SELECT min(cell_id) FROM miss_cell)"
    history = {
        "negative-count": ([lax, "UPDATE cell_history SET count = -1000 WHERE cell = "
                            f"{first_miss}"], "a day, count or cell id out of range"),
        "day-past-9999": ([f"UPDATE cell_history SET day = 3000000 WHERE cell = {first_miss}"],
                          "a day, count or cell id out of range"),
        "day-after-latest": (["UPDATE history_config SET latest_day = latest_day - 1"],
                             "after history_config.latest_day"),
        "no-latest-day": (["UPDATE history_config SET latest_day = NULL"],
                          "history_config.latest_day says none was kept"),
        "cell-id-null": ([f"UPDATE miss_cell SET cell_id = NULL WHERE cell_id = {first_miss}"],
                         "miss_cell: a cell id missing or out of range"),
        "cell-id-zero": (["UPDATE dispatch_cell SET cell_id = 0 WHERE cell_id = "
                          "(SELECT min(cell_id) FROM dispatch_cell)"],
                         "dispatch_cell: a cell id missing or out of range"),
        "cell-id-past-next": (["UPDATE dispatch_cell SET cell_id = 1000000 WHERE cell_id = "
                               "(SELECT min(cell_id) FROM dispatch_cell)"],
                              "dispatch_cell: a cell id out of range"),
        "cell-id-at-next": (["UPDATE miss_cell SET cell_id = (SELECT next_cell_id FROM "
                             f"history_config) WHERE cell_id = {first_miss}"],
                            "miss_cell: a cell id out of range"),
        "history-cell-zero": (["UPDATE cell_history SET cell = 0 WHERE cell = " + first_miss],
                              "a day, count or cell id out of range"),
        "history-past-next": (["INSERT INTO cell_history (cell, day, origin, count) SELECT "
                               "next_cell_id, latest_day, 0, 1000 FROM history_config"],
                              "a day, count or cell id out of range"),
        "shared-cell-id": (["UPDATE dispatch_cell SET cell_id = " + first_miss + " WHERE cell_id "
                            "= (SELECT min(cell_id) FROM dispatch_cell)"], "share the cell id"),
        "unknown-origin": ([f"UPDATE cell_history SET origin = 77 WHERE cell = {first_miss}"],
                           "a row naming no store (origin 77"),
    }
    for name, (sql, needle) in history.items():
        path = j(f"history-{name}.db")
        before = altered(path, *sql, src=base)
        for what, cmd in (("fdx-top --since", [top, "--since", "2000-01-01", path]),
                          ("fdx-top --growth", [top, "--growth", "7d", path]),
                          ("fdx-report", [report, path, j(f"history-{name}.html")])):
            expect_failure(run(cmd), f"{what} of a store with {name}", path, needle)
        # A copied store's first write hands its history over first, which
        # may be what refuses it (SQLite's CHECK of a count).
        expect_failure(run([prune, "--op", "NoSuchOp", path]), f"fdx-prune of {name}", path)
        check(not os.path.exists(j(f"history-{name}.html")), f"no report of a store with {name}")
        if name.startswith("cell-id-"):
            # A writer would number a new cell with an id the store holds,
            # or (a cell without its id) count a merge's history twice.
            expect_failure(run([ingest, path, new_cell]), f"ingest into {name}", path, needle)
            expect_failure(run([merge, path, base]), f"merge into {name}", path, needle)
        check(run([top, path]).returncode == 0, f"fdx-top's totals of a store with {name}")
        # a merge refuses what the readers refuse: a day past the source's latest
        # would have become the target's latest for good
        dst = j(f"history-{name}-fleet.db")
        expect_failure(run([merge, dst, path]), f"merge from a store with {name}", path, needle)
        check(not os.path.exists(dst), f"failed merge from {name} left {dst} behind")
        check(digest(path) == before, f"the store with {name} is as it was")
    # Two origins naming one store, the store itself among them or spelt with a
    # U+0000 after it: the merge would keep one of each day's two rows
    # (and lose the other's counts), so it refuses the source.
    same_store = {
        "origin-is-itself": "SELECT id FROM store_identity",
        "origin-with-nul": "SELECT id || char(0) || 'z' FROM store_identity",
    }
    for name, origin in same_store.items():
        path = j(f"history-{name}.db")
        before = altered(path, f"INSERT INTO history_origin SELECT 1, ({origin})",
                         "INSERT INTO cell_history (cell, day, origin, count) SELECT cell, day, "
                         f"1, 5 FROM cell_history WHERE cell = {first_miss} AND origin = 0 "
                         "ORDER BY day DESC LIMIT 1",
                         f"UPDATE miss_cell SET count = count + 5 WHERE cell_id = {first_miss}",
                         src=base)
        dst = j(f"history-{name}-fleet.db")
        expect_failure(run([merge, dst, path]), f"merge from a store with {name}", path,
                       "history_origin")
        check(not os.path.exists(dst), f"failed merge from {name} left {dst} behind")
        check(digest(path) == before, f"the store with {name} is as it was")
    ledger = {
        "negative-records": "UPDATE ingest_ledger SET records = -5000000",
        "unknown-kind": "UPDATE ingest_ledger SET kind = 'bogus'",
        "empty-run-id": "UPDATE ingest_ledger SET run_id = ''",
        "capture-before-1970": "UPDATE ingest_ledger SET captured_at = -62135596801",
    }
    for name, sql in ledger.items():
        path = j(f"ledger-{name}.db")
        before = altered(path, lax, sql, src=base)
        expect_failure(run([report, path, j(f"ledger-{name}.html")]), f"fdx-report of {name}",
                       path, "values fdx does not write", "ingest_ledger row of id 1")
        dst = j(f"ledger-{name}-fleet.db")
        expect_failure(run([merge, dst, path]), f"merge from a store with {name}", path,
                       "values fdx does not write", "ingest_ledger row of id 1")
        check(not os.path.exists(dst), f"failed merge from {name} left {dst} behind")
        check(digest(path) == before, f"the store with {name} is as it was")


def one_miss_per_key(path, keys, op="Gelu", count=3):
    with open(path, "w") as f:
        for key in keys:
            f.write('{"schema":2,"wanted":"%s","fallback":{"backend":"Cuda","op":"%s",'
                    '"dtypes":["F32"],"kernel_source":"g","kernel_revision_hash":1},"count":%d,'
                    '"hw":{"compute_capability":[8,6],"hardware_sku":"A","driver_version":"1"}}\n'
                    % (key, op, count))
    return path


def keys_out_of_order(j, ingest, export, merge, top):
    """A store whose file was edited in place, a key's bytes changed so that
    its table's B-tree is out of order (SQLite trusts the order, and an open
    does not read every page): an export wrote the lines out of order with
    exit 0, and a merge of a key repeated wrote a target whose history no
    longer added up. Both are refused, naming the table and the cell, with no
    line written, the last export kept and no target made; so is fdx-top."""
    feed = one_miss_per_key(j("order.jsonl"), ("order:aaa", "order:bbb", "order:ccc"))
    for name, into in (("past-the-next", b"order:zzz"), ("repeated", b"order:ccc")):
        path, out = j(f"order-{name}.db"), j(f"order-{name}-out")
        p = run([ingest, "-q", path, feed])
        check(p.returncode == 0, f"ingest of the store {name}", p.stderr)
        check(run([export, "-q", path, out]).returncode == 0, f"first export of {name}")
        kept = open(os.path.join(out, "misses.jsonl"), "rb").read()
        with open(path, "rb") as f:
            image = f.read()
        check(image.count(b"order:bbb") >= 1, f"the key is in the file of {name}")
        with open(path, "wb") as f:  # the table's leaf and the by-id index's
            f.write(image.replace(b"order:bbb", into))
        before = digest(path)
        expect_failure(run([export, path, out]), f"export of a store with keys {name}", path,
                       "miss_cell, cell 3: not after the cell before it in key order")
        check(open(os.path.join(out, "misses.jsonl"), "rb").read() == kept,
              f"the last export of {name} is kept")
        p = run([export, "--kind", "misses", path, "-"])
        expect_failure(p, f"export to stdout of a store with keys {name}", "in key order")
        check(p.stdout == "", f"the stream of {name} writes no line", p.stdout)
        target = j(f"order-{name}-fleet.db")
        expect_failure(run([merge, target, path]), f"merge of a store with keys {name}", path,
                       "miss_cell, cell 3: not after the cell before it in key order")
        check(not os.path.exists(target), f"the failed merge of {name} made no target")
        expect_failure(run([top, path]), f"fdx-top of a store with keys {name}", path,
                       "in key order")
        check(digest(path) == before, f"the store with keys {name} is as it was")


def tombstones_naming_other_ids(j, base, ingest, merge, top, prune):
    """A prune's tombstone keeps the id its cell had, and a later prune hands
    the history of that id to it. One crafted to hold the id the next new
    cell gets, a live cell's id or another tombstone's, a history row planted
    at a tombstone's id, and a tombstone's history row planted for the next
    tombstone each credited observations to a key pruned long before (which
    then kept a merge from bringing the key back). Writers refuse the first
    (they would give the id), readers of the history all five; the store is
    left as it was."""
    gelu = one_miss_per_key(j("tomb-gelu.jsonl"), ("order:aaa", "order:bbb"))
    tanh = one_miss_per_key(j("tomb-tanh.jsonl"), ("order:aaa", "order:bbb"), op="Tanh")
    new = one_miss_per_key(j("tomb-relu.jsonl"), ("zz:new",), op="Relu", count=100)
    next_id = "(SELECT next_cell_id FROM history_config)"
    cases = {
        "at-next": f"UPDATE pruned_cell SET cell_id = {next_id} WHERE id = 1",
        "a-cell": "UPDATE pruned_cell SET cell_id = (SELECT min(cell_id) FROM miss_cell) "
                  "WHERE id = 1",
        "another-tombstone": "UPDATE pruned_cell SET cell_id = (SELECT cell_id FROM "
                             "pruned_cell WHERE id = 2) WHERE id = 1",
        "history-at-a-tombstone": "INSERT INTO cell_history (cell, day, origin, count) SELECT "
                                  "cell_id, (SELECT latest_day FROM history_config), 0, 1000000 "
                                  "FROM pruned_cell WHERE id = 1",
        "tombstone-history-of-none": "INSERT INTO pruned_history (cell, day, origin, count) "
                                     "SELECT max(id) + 1, 20513, 0, 1000000 FROM pruned_cell",
    }
    for name, sql in cases.items():
        path = j(f"tomb-{name}.db")
        for feed in (gelu, tanh):
            check(run([ingest, "-q", path, feed]).returncode == 0, f"ingest of {feed}")
        p = run([prune, "-q", "--op", "Tanh", path])
        check(p.returncode == 0, "the prune that leaves two tombstones", p.stderr)
        before = altered(path, sql)
        needle = {"at-next": "pruned_cell: a cell id out of range",
                  "history-at-a-tombstone": "cell_history: a row of a pruned cell's id",
                  "tombstone-history-of-none": "pruned_history: a row of no tombstone"}.get(
                      name, "pruned_cell: a tombstone names the cell id of a cell or of another "
                      "tombstone")
        if name == "at-next":
            expect_failure(run([ingest, path, new]), f"ingest beside a tombstone {name}", path,
                           needle)
            expect_failure(run([merge, path, base]), f"merge beside a tombstone {name}", path,
                           needle)
        for what, cmd in (("fdx-top --growth", [top, "--growth", "7d", path]),
                          ("fdx-prune", [prune, "--op", "Relu", path])):
            expect_failure(run(cmd), f"{what} beside a tombstone {name}", path, needle)
        check(digest(path) == before, f"the store with a tombstone {name} is as it was")


def crafted_pruned_history_merged(j, ingest, merge, prune):
    """A merge counts what a source pruned of a cell it observed again, so it
    checks those rows as it checks the live history: a count below 1, a day
    past 9999 or an origin the source does not know is refused, naming the
    source and the table, and the target is not made."""
    gelu = one_miss_per_key(j("ph-gelu.jsonl"), ("order:aaa",))
    lax = "PRAGMA ignore_check_constraints = ON"
    src = j("ph-src.db")
    for step in ([ingest, "-q", src, gelu], [prune, "-q", "--op", "Gelu", src],
                 [ingest, "-q", src, gelu]):
        p = run(step)
        check(p.returncode == 0, f"{os.path.basename(step[0])} of the pruned source", p.stderr)
    p = run([merge, "-q", j("ph-fleet.db"), src])
    check(p.returncode == 0, "merge of the source as fdx left it", p.stderr)
    con = sqlite3.connect(j("ph-fleet.db"))
    n = con.execute("SELECT count FROM miss_cell").fetchone()[0]
    con.close()
    check(n == 6, "the merge counts the pruned and the new observations", n)
    cases = {
        "negative-count": [lax, "UPDATE pruned_history SET count = -5"],
        "day-past-9999": ["UPDATE pruned_history SET day = 3000000"],
        "unknown-origin": ["UPDATE pruned_history SET origin = 77"],
    }
    # A miss tombstone with keyed 0 is no tombstone of a miss cell to a merge
    # target; read as a source it added its rows, so each round trip between
    # the two stores grew both.
    path, dst = j("ph-keyed-0.db"), j("ph-keyed-0-fleet.db")
    altered(path, "UPDATE pruned_cell SET keyed = 0", src=src)
    for step in range(2):
        for a, b in ((dst, path), (path, dst)):
            p = run([merge, "-q", a, b])
            check(p.returncode == 0, f"round trip {step} with a miss tombstone of keyed 0",
                  p.stderr)
    counts = []
    for db in (path, dst):
        con = sqlite3.connect(db)
        counts.append(con.execute("SELECT count FROM miss_cell").fetchone()[0])
        con.close()
    check(counts == [3, 3], "a tombstone that matches no target's key adds nothing", counts)
    for name, sql in cases.items():
        path = j(f"ph-{name}.db")
        before = altered(path, *sql, src=src)
        dst = j(f"ph-{name}-fleet.db")
        expect_failure(run([merge, dst, path]), f"merge of a source with pruned history {name}",
                       path, "pruned_history:",
                       "tombstone 1")
        check(not os.path.exists(dst), f"the failed merge of {name} left no {dst}")
        check(digest(path) == before, f"the source with pruned history {name} is as it was")


def diff_other_replaced(j, base, diff):
    """fdx-diff opens the other store twice: to check its layout, then to
    attach it to the comparison, by its path. A crafted store renamed over
    that path before any of those opens is refused, naming it, and none of
    its cells is shown (the cells were checked through the first open only,
    so a store replaced before the second was compared unchecked)."""
    shim = os.environ.get("FDX_FAULT_SHIM")
    if not shim or not os.path.exists(shim):
        return skip(1, "fdx-diff with the other store replaced: FDX_FAULT_SHIM not built")
    good, bad, other = j("dr-good.db"), j("dr-bad.db"), j("dr-other.db")
    shutil.copy(base, good)
    altered(bad, "INSERT INTO miss_cell SELECT CAST(x'ff' AS TEXT) || 'EVIL', backend, op, "
            "dtypes, kernel_source, kernel_revision_hash, cc_major, cc_minor, hardware_sku, "
            "driver_version, 9223372036854775807, first_ingest, last_ingest, "
            "(SELECT next_cell_id FROM history_config) FROM miss_cell LIMIT 1",
            "UPDATE history_config SET next_cell_id = next_cell_id + 1", src=base)
    opens, at = 0, 1
    while True:
        swap = j("dr-swap.db")
        shutil.copy(good, other)
        shutil.copy(bad, swap)
        env = dict(os.environ, LD_PRELOAD=shim, FDX_SWAP_NAME="dr-other.db", FDX_SWAP_WITH=swap,
                   FDX_SWAP_AT=str(at), ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") +
                   ":verify_asan_link_order=0")
        p = subprocess.run([diff, "--json", base, other], env=env, capture_output=True,
                           text=True, errors="replace", timeout=TIMEOUT)
        if os.path.exists(swap):  # fewer opens than at: every one was tried
            break
        opens = at
        check("EVIL" not in p.stdout, f"fdx-diff showed a cell of the store renamed over the "
              f"other before its open {at}", p.stdout[:300])
        expect_failure(p, f"fdx-diff with the other store replaced before its open {at}",
                       other, "invalid UTF-8")
        at += 1
    check(opens >= 2, "fdx-diff opened the other store twice", opens)


def utf16_store(j, base, ingest, export, top, merge):
    """SQLite compares text as the bytes of the database's encoding, so a
    store copied into a UTF-16 database (integrity_check ok, and accepted
    before) would sort its keys in an order other than the export's. Every
    tool refuses it as not UTF-8, and leaves it as it was."""
    path = j("utf16.db")
    src, dst = sqlite3.connect(base), sqlite3.connect(path, isolation_level=None)
    dst.execute("PRAGMA encoding = 'UTF-16le'")
    dst.execute("BEGIN")
    rows = src.execute("SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL "
                       "ORDER BY rowid").fetchall()
    for kind, name, sql in rows:
        if kind == "table":
            dst.execute(sql)
            width = len(src.execute(f"PRAGMA table_info({name})").fetchall())
            dst.executemany(f"INSERT INTO {name} VALUES ({','.join('?' * width)})",
                            src.execute(f"SELECT * FROM {name}").fetchall())
    for kind, name, sql in rows:
        if kind != "table":
            dst.execute(sql)
    dst.execute("COMMIT")
    for pragma in ("user_version", "application_id"):
        dst.execute(f"PRAGMA {pragma} = {src.execute(f'PRAGMA {pragma}').fetchone()[0]}")
    src.close()
    dst.close()
    before = digest(path)
    needle = "its text encoding is UTF-16le"
    for what, cmd in (("export", [export, path, j("utf16-out")]), ("fdx-top", [top, path]),
                      ("ingest", [ingest, path, j("order.jsonl")]),
                      ("merge from it", [merge, j("utf16-fleet.db"), path]),
                      ("merge into it", [merge, path, base])):
        expect_failure(run(cmd), f"{what} of a UTF-16 store", path, needle)
    check(digest(path) == before, "the UTF-16 store is as it was")
    check(not os.path.exists(j("utf16-fleet.db")), "a failed merge from it made no target")
    # A database that holds nothing yet keeps the encoding its header has.
    empty = j("utf16-empty.db")
    con = sqlite3.connect(empty, isolation_level=None)
    con.execute("PRAGMA encoding = 'UTF-16le'")
    con.execute("CREATE TABLE t (x)")  # writes the header
    con.execute("DROP TABLE t")
    con.close()
    before = digest(empty)
    expect_failure(run([ingest, empty, j("order.jsonl")]), "ingest into an empty UTF-16 file",
                   empty, needle)
    check(digest(empty) == before, "the empty UTF-16 file is as it was")


def outputs_beside_the_store(j, base, export, ingest, data):
    """Outputs are written to a temporary file renamed over their name: never
    over the store's own files (fdx-report DB DB replaced the store with its
    page), nor over a symlink (the rename replaces the link: --rejects
    /dev/stdout replaced the system's link) or a device."""
    report = os.path.join(os.path.dirname(export), "fdx-report")
    store = j("outs.db")
    shutil.copy(base, store)
    link = j("outs-link")
    os.symlink("/proc/self/fd/1", link)
    before = digest(store)
    here = os.path.relpath(store)
    for out in (store, here, os.path.join(os.path.dirname(store), ".", "outs.db"),
                store + "-wal", store + "-journal"):
        expect_failure(run([report, store, out]), f"fdx-report {store} {out}", out,
                       "would be replaced")
    expect_failure(run([report, store, link]), "fdx-report to a symlink", "symbolic link")
    expect_failure(run([report, store, "/dev/null"]), "fdx-report to a device",
                   "not a regular file")
    p = run([ingest, "--skip-invalid", "--rejects", link, j("outs2.db"),
             os.path.join(data, "basic", "input", "run_0000")])
    check(p.returncode == 2 and "symbolic link" in p.stderr, "--rejects to a symlink refused",
          p.stderr)
    check(os.path.islink(link) and digest(store) == before,
          "the store and the symlink are as they were")
    check(not os.path.exists(j("outs2.db")), "a refused ingest made no store")


def uri_shaped_paths(j, data, ingest, export, merge):
    """A store path that starts with "file:" names that file (":memory:" alone
    is a store in memory, as in SQLite). An SQLite built
    with SQLITE_USE_URI (Debian's) reads such a name as a URI even unasked:
    "file:u.db?mode=memory" was a database in memory (an ingest reported its
    cells added and kept none) and "file:u.db" was u.db, which fdx-diff
    attached in place of the store it had checked."""
    d = j("uri")
    os.makedirs(d)
    at = lambda cmd: subprocess.run(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, errors="replace", timeout=TIMEOUT)
    feeds = [os.path.join(data, "basic", "input", r) for r in ("run_0000", "run_0001")]
    p = at([ingest, "-q", "file:u.db"] + feeds[:1])
    check(p.returncode == 0, "ingest into file:u.db", p.stderr)
    check(os.listdir(d) == ["file:u.db"], f"ingest into file:u.db made {sorted(os.listdir(d))}")
    memory = "file:m.db?mode=memory"
    p = at([ingest, "-q", memory] + feeds)
    check(p.returncode == 0 and os.path.exists(os.path.join(d, memory)),
          f"ingest into {memory} kept a store by that name", p.stderr)
    p = at([export, memory, "out"])
    check(p.returncode == 0, f"export of {memory}", p.stderr)
    check(open(os.path.join(d, "out", "misses.jsonl")).read() ==
          open(j("base-out", "misses.jsonl")).read(), f"{memory} exported what was ingested")
    # u.db, a crafted store, is not the file:u.db that fdx-diff checks.
    shutil.copy(os.path.join(d, memory), os.path.join(d, "u.db"))
    con = sqlite3.connect(os.path.join(d, "u.db"), isolation_level=None)
    con.execute("DROP TABLE miss_cell")
    con.close()
    diff = os.path.join(os.path.dirname(export), "fdx-diff")
    prune = os.path.join(os.path.dirname(export), "fdx-prune")
    p = at([diff, memory, "file:u.db"])
    check(p.returncode == 0 and "3 cells changed" in p.stderr,
          "fdx-diff compares file:u.db itself (one run of two)", p.stdout + p.stderr)
    p = at([merge, "-q", "file:merged.db", "file:u.db", memory])
    check(p.returncode == 0 and os.path.exists(os.path.join(d, "file:merged.db")),
          "merge of file: paths", p.stderr)
    p = at([ingest, "-q", "./:memory:"] + feeds)
    check(p.returncode == 0 and os.path.exists(os.path.join(d, ":memory:")),
          "ingest into ./:memory: kept a store by that name", p.stderr)
    p = at([export, "--kind", "dispatches", "./:memory:", "-"])
    check(p.returncode == 0 and p.stdout == open(j("base-out", "dispatches.jsonl")).read(),
          "export of ./:memory:", p.stderr)
    before = sorted(os.listdir(d))
    p = at([ingest, ":memory:"] + feeds)
    check(p.returncode == 0 and "cells added" in p.stderr and sorted(os.listdir(d)) == before,
          "an ingest into :memory: (a store in memory) counts the cells and keeps no file",
          p.stderr)


def with_commit_in_wal(base, work, dest):
    """dest: a copy of base whose last commit is still in its -wal, with no
    -shm (as a writer killed before its checkpoint leaves it), made at work."""
    shutil.copy(base, work)
    con = sqlite3.connect(work, isolation_level=None)
    con.execute("PRAGMA wal_autocheckpoint = 0")
    con.execute("UPDATE miss_cell SET count = count + 1000")
    shutil.copy(work, dest)
    shutil.copy(work + "-wal", dest + "-wal")
    con.close()


def readonly_media(j, base, export, top):
    ingest = os.path.join(os.path.dirname(export), "fdx-ingest")
    fs = j("ro-fs")
    os.makedirs(fs)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", fs],
                       capture_output=True, text=True)
    if p.returncode != 0:
        skip(5, f"read-only media checks: cannot mount a tmpfs ({p.stderr.strip()})")
        return
    try:
        with_commit_in_wal(base, j("live.db"), os.path.join(fs, "wal.db"))
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
        # A writer there said "unable to open database file (No such file or
        # directory)", of a file that is there.
        expect_failure(run([ingest, clean, "/dev/null"]), "a writer of a store on read-only media",
                       clean, "cannot be written here: Read-only file system")
    finally:
        subprocess.run(["umount", "-l", fs])


def many_cells(ingest, path, n, count):
    """A store of n miss cells, each seen count times."""
    feed = path + ".jsonl"
    with open(feed, "w") as fh:
        for i in range(n):
            fh.write('{"schema":2,"wanted":"w%d","fallback":{"backend":"Cuda","op":"MatMul",'
                     '"dtypes":["F16"],"kernel_source":"k","kernel_revision_hash":1},'
                     '"count":%d,"hw":{"hardware_sku":"s","driver_version":"d"}}\n' % (i, count))
    p = run([ingest, "-q", path, feed])
    check(p.returncode == 0, f"a store of {n} cells", p.stderr)


def readonly_directory(j, base, export, top, merge, ingest):
    """A WAL store in a directory its reader cannot write, where SQLite cannot
    make the -shm file it reads a WAL store through. Run as root, the readers
    run as nobody, from copies of the tools (a build directory may not be
    theirs to reach)."""
    root = os.geteuid() == 0
    bins, d, out = j("ro-bin"), j("ro-dir"), j("ro-out")
    for path in (bins, d, out):
        os.makedirs(path)
    os.chmod(j(), 0o755)
    os.chmod(out, 0o777)
    tools = {}
    for tool in (export, top, merge, os.path.join(os.path.dirname(export), "fdx-diff"), ingest):
        tools[os.path.basename(tool)] = shutil.copy(tool, bins)
    shim = os.environ.get("FDX_FAULT_SHIM")
    shim = shutil.copy(shim, bins) if shim and os.path.exists(shim) else None

    def reader(name, *args, shrink=None, stdout=subprocess.PIPE):
        """Runs a tool as a reader; shrink: the fault shim's settings (only the
        tool is preloaded with it, not setpriv)."""
        cmd = [tools[name]] + list(args)
        if shrink:
            cmd = ["env", f"LD_PRELOAD={shim}", "ASAN_OPTIONS=" +
                   os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"] + \
                [f"{k}={v}" for k, v in shrink.items()] + cmd
        if root:
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
        return subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True,
                              errors="replace", timeout=TIMEOUT)

    if root and (not shutil.which("setpriv") or subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "test", "-w", out]
            ).returncode != 0):
        return skip(9, f"a read-only directory: nobody cannot reach {out} (setpriv, or a "
                       "parent directory closed to other users)")

    store, copy = os.path.join(d, "s.db"), j("ro-copy.db")
    changing = {name: os.path.join(d, name + ".db") for name in ("cut", "grown")}
    for path in [store, copy] + list(changing.values()):
        shutil.copy(base, path)
    # fdx-diff writes its first line once it has read both stores; these
    # differ in enough cells for that line to leave before the end.
    changing["diffed"], changed = os.path.join(d, "diffed.db"), j("ro-changed.db")
    many_cells(ingest, changing["diffed"], 2000, 1)
    many_cells(ingest, changed, 2000, 2)
    for path in changing.values():
        os.chmod(path, 0o666)  # for the shim, which changes it as the reader
    writable = os.path.join(d, "writable.db")
    shutil.copy(base, writable)
    os.chmod(writable, 0o666)  # its directory alone keeps a writer out
    check(open(store, "rb").read(20)[18:20] == b"\x02\x02", "the store read is a WAL store")
    live = os.path.join(d, "live.db")
    with_commit_in_wal(base, j("ro-live.db"), live)
    os.chmod(d, 0o755 if root else 0o555)
    try:
        before = sorted(os.listdir(d))
        p = reader("fdx-export", store, os.path.join(out, "a"))
        check(p.returncode == 0 and open(os.path.join(out, "a", "misses.jsonl")).read() ==
              open(j("base-out", "misses.jsonl")).read() and
              open(os.path.join(out, "a", "dispatches.jsonl")).read() ==
              open(j("base-out", "dispatches.jsonl")).read(),
              "export of a WAL store in a read-only directory", p.stderr)
        p = reader("fdx-top", store)
        check(p.returncode == 0 and p.stdout == run([top, copy]).stdout,
              "fdx-top of a WAL store in a read-only directory", p.stderr)
        for a, b in ((store, copy), (copy, store)):
            p = reader("fdx-diff", a, b)
            check(p.returncode == 0 and "0 cells changed" in p.stderr,
                  f"fdx-diff {os.path.basename(a)} {os.path.basename(b)}, one in a read-only "
                  f"directory", p.stdout + p.stderr)
        merged = os.path.join(out, "merged.db")
        p = reader("fdx-merge", "-q", merged, store)
        check(p.returncode == 0 and run([export, merged, j("ro-merged")]).returncode == 0 and
              open(j("ro-merged", "misses.jsonl")).read() ==
              open(j("base-out", "misses.jsonl")).read(),
              "fdx-merge of a WAL store in a read-only directory", p.stderr)
        expect_failure(reader("fdx-export", live, os.path.join(out, "live")),
                       "export of a store with its last commit in the -wal in a read-only "
                       "directory", live, "-wal")
        # Through a symlink, the -wal is the one beside the store, not the link.
        for target, name in ((live, "live-link.db"), (store, "s-link.db")):
            os.symlink(target, os.path.join(out, name))
        expect_failure(reader("fdx-export", os.path.join(out, "live-link.db"),
                              os.path.join(out, "live")),
                       "export through a symlink of a store with its last commit in the -wal "
                       "in a read-only directory", "live-link.db", live + "-wal")
        p = reader("fdx-export", os.path.join(out, "s-link.db"), os.path.join(out, "link"))
        check(p.returncode == 0 and open(os.path.join(out, "link", "misses.jsonl")).read() ==
              open(j("base-out", "misses.jsonl")).read(),
              "export through a symlink of a WAL store in a read-only directory", p.stderr)
        check(sorted(os.listdir(d)) == before, "readers wrote into a read-only directory",
              str(sorted(os.listdir(d))))
        feed = one_miss_per_key(os.path.join(out, "w.jsonl"), ("order:aaa",))
        expect_failure(reader("fdx-ingest", writable, feed), "an ingest into a store whose "
                       "directory its writer cannot write", writable, "its directory cannot be "
                       "written")
        check(sorted(os.listdir(d)) == before, "a refused writer wrote into its directory",
              str(sorted(os.listdir(d))))
        if not shim:
            return skip(3, "a store changed under a read without locks: FDX_FAULT_SHIM does "
                           "not name the fault shim")
        # Cut short, SQLite's reads fail; grown, they go on, and only the
        # file's state tells.
        size = os.path.getsize(store)
        for how, path, to in (("cut short", changing["cut"], size // 4),
                              ("grown", changing["grown"], size * 2)):
            what = f"export of a store {how} under a read without locks"
            p = reader("fdx-export", path, os.path.join(out, "a"),
                       shrink={"FDX_SHRINK_FILE": path, "FDX_SHRINK_TO": to})
            expect_failure(p, what, path, "changed while it was read")
            check(open(os.path.join(out, "a", "misses.jsonl")).read() ==
                  open(j("base-out", "misses.jsonl")).read() and
                  sorted(os.listdir(os.path.join(out, "a"))) ==
                  ["dispatches.jsonl", "misses.jsonl"],
                  f"{what}: the previous pair alone", str(os.listdir(os.path.join(out, "a"))))
        # fdx-diff writes through stdio, which the shim does not see: the
        # store grows before the diff's last read instead.
        path, log = changing["diffed"], os.path.join(out, "preads.log")

        def diff_grown_at(at):
            if os.path.exists(log):
                os.remove(log)
            p = reader("fdx-diff", "-n", "0", path, changed, stdout=subprocess.DEVNULL,
                       shrink={"FDX_SHRINK_FILE": path, "FDX_SHRINK_TO": 2 * size,
                               "FDX_SHRINK_AT_PREAD": at, "FDX_SYNC_LOG": log})
            return p, [int(line.split()[1]) for line in open(log) if line.startswith("preads ")]

        p, preads = diff_grown_at(0)
        check(p.returncode == 0 and preads and preads[-1] > 0,
              "fdx-diff of a store in a read-only directory, its reads counted", p.stderr)
        if preads:
            p, _ = diff_grown_at(preads[-1])
            expect_failure(p, "fdx-diff of a store grown before its last read without locks",
                           path, "changed while it was read")
    finally:
        os.chmod(d, 0o755)


if __name__ == "__main__":
    sys.exit(main())
