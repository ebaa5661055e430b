#!/usr/bin/env python3
"""Faults: each gives a clear message, a non-zero exit and no change to the
stored data. Disk full while ingesting and while exporting (a small tmpfs),
the first commit into a store that held nothing on a full disk, a copy's
first write with TMPDIR full, a rejects file on a full disk, a read-only
store, a store locked past the busy timeout (and --busy-timeout 0 failing at
once), a hot journal on read-only media, a corrupt store, a non-SQLite file,
a newer schema version. An export replaces its pair of files or neither: a
full disk while the second file is written and a directory where
dispatches.jsonl should be leave both previous files, as does a directory
that cannot be opened for the fsync that makes the renames durable; an fsync
that fails after them says so. Exported files follow the umask. Checks that need mounting are skipped, with a message, where
mounting is not permitted.

Usage: faults_test.py FDX_INGEST FDX_EXPORT GEN_FEED
"""
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from testlib import check, finish, make_hot_journal, run, skip

def digest(path):
    h = hashlib.sha256()
    for suffix in ("", "-wal"):
        if os.path.exists(path + suffix):
            h.update(open(path + suffix, "rb").read())
    return h.hexdigest()


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    p = run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path])
    return p.returncode == 0, p.stderr.strip()


def umount(path):
    run(["umount", "-l", path])


def expect_failure(p, what, *needles):
    check(p.returncode == 1, f"{what}: exit {p.returncode}, want 1", p.stderr)
    for n in needles:
        check(n in p.stderr, f"{what}: message lacks {n!r}", p.stderr)


def run_bounded(cmd):
    """run() with a generous bound, so that a program that waits when it should
    fail at once makes the test fail instead of hang."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, -1, "", f"timed out: {e}")


def pair(out):
    return {n: open(os.path.join(out, n), "rb").read() for n in ("misses.jsonl", "dispatches.jsonl")}


def listing(out):
    return sorted(os.listdir(out))


def export_with_umask(export, db, out, mask):
    return subprocess.run([export, db, out], capture_output=True, text=True,
                          preexec_fn=lambda: os.umask(mask))


def copy_with_full_tmpdir(ingest, big, fs, copy):
    """A copy's first write moves the history it holds as its own aside, in a
    temporary table under TMPDIR, and back under the original's origin. With
    TMPDIR full it fails, naming the store and the full disk, and leaves the
    copy as it was; with room, every row is moved and none is lost."""
    ok, why = mount_tmpfs(fs, "64k")
    if not ok:
        return skip(8, f"a copy's first write with TMPDIR full: cannot mount a tmpfs ({why})")
    try:
        shutil.copy(big, copy)
        con = sqlite3.connect(copy)
        rows = con.execute("SELECT count(*), sum(count) FROM cell_history WHERE origin = 0").fetchone()
        con.close()
        check(rows[0] > 5000, "the copy holds history of its own", str(rows))
        before = digest(copy)
        p = subprocess.run([ingest, copy, os.devnull], capture_output=True, text=True,
                           env=dict(os.environ, TMPDIR=fs))
        expect_failure(p, "a copy's first write with TMPDIR full", os.path.basename(copy), "full")
        check(digest(copy) == before, "copy unchanged when its history cannot move aside")
        check(os.listdir(fs) == [], "temporary files left in TMPDIR", str(os.listdir(fs)))
        p = run([ingest, "-q", copy, os.devnull])
        check(p.returncode == 0, "a copy's first write with room in TMPDIR", p.stderr)
        con = sqlite3.connect(copy)
        got = con.execute("SELECT count(*), sum(count), count(DISTINCT origin), min(origin) "
                          "FROM cell_history").fetchone()
        con.close()
        check(got == (rows[0], rows[1], 1, 1), "the copy's history, moved under the original's "
              "origin", f"{got} from {rows}")
    finally:
        umount(fs)


def full_disk_on_second_file(export, base, big, fs):
    """The output fits the new misses.jsonl but not the new dispatches.jsonl."""
    sizes = fs + "-sizes"
    check(run([export, big, sizes]).returncode == 0, "export of the big store")
    m, d = (os.path.getsize(os.path.join(sizes, n)) for n in ("misses.jsonl", "dispatches.jsonl"))
    ok, why = mount_tmpfs(fs, str(2 * (m + d) + (1 << 20)))
    if not ok:
        return skip(8, f"full disk at the second file: cannot mount a tmpfs ({why})")
    try:
        fill_and_export(export, base, big, fs, m, d)
    finally:
        umount(fs)


def fill_and_export(export, base, big, fs, m, d):
    out = os.path.join(fs, "pair")
    check(run([export, base, out]).returncode == 0, "small export fits")
    old = pair(out)
    st = os.statvfs(fs)
    page = st.f_frsize
    room = page * (-(-m // page) + 2) + d // 2
    check(d // 2 > 4 * page, "dispatches.jsonl is big enough to fill the disk half-way",
          f"{m} {d}")
    with open(os.path.join(fs, "filler"), "wb") as f:
        f.write(b"\0" * (st.f_bavail * page - room))
    p = run([export, big, out])
    expect_failure(p, "export onto a disk full at the second file", "No space left on device",
                   "dispatches.jsonl")
    check(pair(out) == old, "both previous files intact after a full disk at the second file")
    check(listing(out) == ["dispatches.jsonl", "misses.jsonl"],
          "no temporary files after a full disk at the second file", str(listing(out)))
    os.remove(os.path.join(fs, "filler"))


def new_store_on_a_refusing_disk(ingest, feed, d):
    """Every write under d failing, from the first on, as a full disk, a quota
    reached and a failing disk fail it (the fault shim): a new store's ingest
    fails and leaves no file. Removing it takes the write lock, which on a file
    that holds nothing starts a journal the disk refuses; it then keeps that
    journal in memory, whichever way the disk said no."""
    shim = os.environ.get("FDX_FAULT_SHIM")
    if not shim or not os.path.exists(shim):
        return skip(6, "a refusing disk: FDX_FAULT_SHIM does not name the fault shim")
    os.mkdir(d)
    for err in ("ENOSPC", "EDQUOT", "EIO"):
        env = dict(os.environ, LD_PRELOAD=shim, FDX_FULL_UNDER=d, FDX_FULL_AT="1",
                   FDX_FULL_ERRNO=err, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") +
                   ":verify_asan_link_order=0")
        p = subprocess.run([ingest, os.path.join(d, "new.db"), feed], capture_output=True,
                           text=True, timeout=120, env=env)
        check(p.returncode == 1, f"{err}: a new store's ingest fails", p.stderr)
        check(listing(d) == [], f"{err}: files left by a new store's failed ingest",
              str(listing(d)))


def directory_not_synced(ingest, export, base, big, out):
    """The renames of an export are made durable by an fsync of their
    directory (the fault shim fails its steps). A directory that cannot be
    opened for it (not readable by its user) fails the export before either
    file is replaced, and a report or a rejects file before it replaces the
    previous one; an fsync that fails after the renames says both files were
    replaced."""
    shim = os.environ.get("FDX_FAULT_SHIM")
    if not shim or not os.path.exists(shim):
        return skip(6, "a directory not synced: FDX_FAULT_SHIM does not name the fault shim")
    check(run([export, base, out]).returncode == 0, "export before a directory not synced")
    old = pair(out)
    asan = os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
    env = dict(os.environ, LD_PRELOAD=shim, FDX_FAIL_DIR_OPEN="1", ASAN_OPTIONS=asan)
    p = subprocess.run([export, big, out], capture_output=True, text=True, timeout=120, env=env)
    expect_failure(p, "export into a directory that cannot be opened", "opening the directory")
    check(pair(out) == old, "a directory that cannot be opened: the previous pair stays")
    check(listing(out) == ["dispatches.jsonl", "misses.jsonl"],
          "a directory that cannot be opened: no temporary file left", str(listing(out)))
    env = dict(os.environ, LD_PRELOAD=shim, FDX_FAIL_DIR_FSYNC="1", ASAN_OPTIONS=asan)
    p = subprocess.run([export, big, out], capture_output=True, text=True, timeout=120, env=env)
    expect_failure(p, "export whose directory fsync fails", "replaced, but syncing its directory",
                   "was already replaced")
    check(pair(out) != old, "a directory fsync failing after the renames: the pair was replaced")
    # The report and a rejects file are written the same way.
    report = os.path.join(os.path.dirname(export), "fdx-report")
    page = os.path.join(out, "page.html")
    with open(page, "w") as f:
        f.write("previous page\n")
    env = dict(os.environ, LD_PRELOAD=shim, FDX_FAIL_DIR_OPEN="1", ASAN_OPTIONS=asan)
    p = subprocess.run([report, base, page], capture_output=True, text=True, timeout=120, env=env)
    expect_failure(p, "report into a directory that cannot be opened", "opening the directory")
    check(open(page).read() == "previous page\n", "the previous page stays")
    rejects = os.path.join(out, "rejects")
    with open(rejects, "w") as f:
        f.write("previous rejects\n")
    bad = os.path.join(out, "bad.jsonl")
    with open(bad, "w") as f:
        f.write('{"schema":2}\n')
    copy = os.path.join(out, "rejects.db")
    shutil.copy(base, copy)
    p = subprocess.run([ingest, "--skip-invalid", "--rejects", rejects, copy, bad],
                       capture_output=True, text=True, timeout=120, env=env)
    expect_failure(p, "rejects into a directory that cannot be opened", "opening the directory")
    check(open(rejects).read() == "previous rejects\n", "the previous rejects file stays")
    check(sorted(n for n in listing(out) if n.startswith(".")) == [],
          "no temporary file left by the report or the rejects", str(listing(out)))


def hot_journal_on_read_only_media(ingest, export, base, base_out, fs):
    """A store whose writer was killed mid-commit, its journal beside it, on
    media mounted read-only: no program can roll the journal back there.
    Readers and writers refuse it naming the journal, change nothing, and
    the writer does not name itself as the fix; the copy it advises works."""
    ok, why = mount_tmpfs(fs, "8m")
    if not ok:
        return skip(9, f"hot journal on read-only media: cannot mount a tmpfs ({why})")
    try:
        db = os.path.join(fs, "hot.db")
        shutil.copy(base, db)
        make_hot_journal(db, 2000)
        subprocess.run(["mount", "-o", "remount,ro", fs], check=True)
        files = lambda: [open(db + s, "rb").read() for s in ("", "-journal")]
        before = files()
        p = run([ingest, db, os.devnull])
        expect_failure(p, "ingest into a read-only store with a hot journal",
                       db + "-journal", "cannot be written here")
        check(f"fdx-ingest {db} " not in p.stderr, "the ingest that failed is named as the fix",
              p.stderr)
        p = run([export, db, os.path.join(os.path.dirname(fs), "hot-ro-out")])
        expect_failure(p, "export of a read-only store with a hot journal", db + "-journal")
        check(files() == before, "a store with a hot journal on read-only media changed")
        copy = os.path.join(os.path.dirname(fs), "hot-copy.db")
        shutil.copy(db, copy)
        shutil.copy(db + "-journal", copy + "-journal")
        check(run([ingest, "-q", copy, os.devnull]).returncode == 0, "ingest into the copy")
        check(run([export, copy, base_out + "-hot-copy"]).returncode == 0 and
              pair(base_out + "-hot-copy") == pair(base_out),
              "the copy, its journal rolled back, holds the store as it was")
    finally:
        umount(fs)


def long_lists(path, sizes):
    """Dispatch lines whose candidates lists take about each of sizes bytes,
    longer than the blocks an export's rows cross in."""
    impl = lambda src, rev: {"backend": "Cuda", "op": "MatMul", "dtypes": ["F16"],
                             "kernel_source": src, "kernel_revision_hash": rev}
    with open(path, "w") as f:
        for i, size in enumerate(sizes):
            cands = [{"impl_id": impl(f"k{n}", n), "latency_ns": 1000 + n}
                     for n in range(size // 100)]
            f.write(json.dumps({"schema": 2, "structure_key": f"long{i}",
                                "chosen": impl("k0", 0), "candidates": cands, "count": 1,
                                "hw": {"hardware_sku": "s", "driver_version": "d"}},
                               separators=(",", ":")) + "\n")


def threads_refused(ingest, export, j):
    """Where no thread can be started (the fault shim refuses them all, as a
    process at its limit is refused), an ingest and an export do the threads'
    work themselves: the same store, the same lines, long candidates lists
    (past the blocks an export's rows are handed over in) among them. A row
    that fails its check far into a large export stops the thread reading
    ahead of it: the export fails, naming the fault, and keeps the previous
    pair."""
    shim = os.environ.get("FDX_FAULT_SHIM")
    if not shim or not os.path.exists(shim):
        return skip(5, "threads refused: FDX_FAULT_SHIM does not name the fault shim")
    asan = os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
    refused = dict(os.environ, LD_PRELOAD=shim, FDX_FAIL_THREADS="1", ASAN_OPTIONS=asan)
    long_lists(j("long.jsonl"), [300_000, 700_000, 900_000])
    feed = [j("big", "run_0000"), j("long.jsonl")]
    p = run_bounded([ingest, "-q", "--max-line-bytes", "2000000", j("t.db")] + feed)
    check(p.returncode == 0, "an ingest of long lists", p.stderr)
    p = subprocess.run([ingest, "-q", "--max-line-bytes", "2000000", j("s.db")] + feed,
                       env=refused, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "an ingest without threads", p.stderr)
    outs = {}
    for name, env in (("threads", None), ("none", refused)):
        for db in ("t.db", "s.db"):
            out = j(f"out-{name}-{db}")
            p = subprocess.run([export, j(db), out], env=env, capture_output=True, text=True,
                               timeout=300)
            check(p.returncode == 0, f"an export of {db} ({name})", p.stderr)
            outs[(name, db)] = pair(out)
            p = subprocess.run([export, "--kind", "dispatches", j(db), "-"], env=env,
                               capture_output=True, timeout=300)
            check(p.returncode == 0 and p.stdout == outs[(name, db)]["dispatches.jsonl"],
                  f"--kind dispatches of {db} ({name}) is the file's lines")
    first = outs[("threads", "t.db")]
    check(all(o == first for o in outs.values()), "the same lines with and without threads")
    check(max(len(x) for x in first["dispatches.jsonl"].splitlines()) > 900_000,
          "lines longer than a block")

    # Out of memory on the reading thread, a block's growth refused halfway
    # through a row: the export says so, and reads no row in part.
    short = dict(os.environ, LD_PRELOAD=shim, FDX_FAIL_THREAD_REALLOC=str(300 << 10),
                 ASAN_OPTIONS=asan)
    out = j("out-threads-t.db")
    for args in ([export, j("t.db"), out], [export, "--kind", "dispatches", j("t.db"), "-"]):
        p = subprocess.run(args, env=short, capture_output=True, text=True, timeout=120)
        check(p.returncode == 1 and "out of memory" in p.stderr,
              f"out of memory on the reading thread: {args[1:-1]}", p.stderr[-300:])
    check(pair(out) == first, "the pair kept after running out of memory")

    bad = j("bad.db")
    shutil.copy(j("t.db"), bad)
    con = sqlite3.connect(bad)
    con.execute("PRAGMA ignore_check_constraints = ON")
    rows = con.execute("SELECT count(*) FROM dispatch_cell").fetchone()[0]
    check(rows > 5000, "enough rows to read far ahead of", str(rows))
    key = ("keyed, structure_key, kernel_source, kernel_revision_hash, backend, op, dtypes, "
           "cc_major, cc_minor, hardware_sku, driver_version")
    con.execute(f"UPDATE dispatch_cell SET count = 0 WHERE ({key}) = "
                f"(SELECT {key} FROM dispatch_cell ORDER BY {key} LIMIT 1 OFFSET 2000)")
    con.commit()
    con.close()
    out = j("out-bad")
    run_bounded([export, j("t.db"), out])
    before = pair(out)
    for name, env in (("threads", None), ("none", refused)):
        p = subprocess.run([export, bad, out], env=env, capture_output=True, text=True,
                           timeout=120)
        check(p.returncode == 1 and "cell 2001: count: not a count of at least 1" in p.stderr
              and "bad.db" in p.stderr, f"a bad row far into an export ({name})", p.stderr)
        check(pair(out) == before and listing(out) == ["dispatches.jsonl", "misses.jsonl"],
              f"the pair kept after a bad row ({name})", str(listing(out)))


def main():
    ingest, export, gen = sys.argv[1:4]
    with tempfile.TemporaryDirectory(prefix="fdx-faults-") as tmp:
        j = lambda *p: os.path.join(tmp, *p)
        subprocess.run([sys.executable, gen, j("big"), "--runs", "1", "--lines", "20000",
                        "--cells", "20000", "--seed", "3"], check=True)
        subprocess.run([sys.executable, gen, j("small"), "--runs", "1", "--lines", "50",
                        "--cells", "20", "--seed", "4"], check=True)
        base = j("base.db")
        check(run([ingest, "-q", base, j("small", "run_0000")]).returncode == 0, "seed ingest")
        run([export, base, j("base-out")])
        big = j("big.db")
        check(run([ingest, "-q", big, j("big", "run_0000")]).returncode == 0, "big ingest")
        threads_refused(ingest, export, j)

        ok, why = mount_tmpfs(j("small-fs"), "512k")
        if not ok:
            skip(19, f"disk-full and read-only checks: cannot mount a tmpfs ({why})")
        else:
            try:
                # Disk full while ingesting: the store lives on a 512 KiB tmpfs.
                db = j("small-fs", "s.db")
                shutil.copy(base, db)
                before = digest(db)
                p = run([ingest, db, j("big", "run_0000")])
                expect_failure(p, "ingest onto a full disk", "s.db")
                check("full" in p.stderr.lower(), "disk full is named", p.stderr)
                check(digest(db) == before or run([export, db, j("o1")]).returncode == 0 and
                      open(j("o1", "misses.jsonl")).read() ==
                      open(j("base-out", "misses.jsonl")).read(), "store unchanged after a full disk")
                run([export, db, j("o1")])
                check(open(j("o1", "misses.jsonl")).read() == open(j("base-out", "misses.jsonl")).read(),
                      "full-disk ingest left the data as it was")
                for n in os.listdir(j("small-fs")):
                    os.remove(j("small-fs", n))

                # Disk full during the first commit into a store that held nothing,
                # which goes through a rollback journal: a new store is removed; an
                # empty file is left holding nothing, with no journal for a reader to
                # trip on.
                p = run([ingest, j("small-fs", "new.db"), j("big", "run_0000")])
                expect_failure(p, "first ingest into a new store on a full disk", "full")
                check(listing(j("small-fs")) == [], "files left by a new store's failed ingest",
                      str(listing(j("small-fs"))))
                empty = j("small-fs", "empty.db")
                open(empty, "w").close()
                p = run([ingest, empty, j("big", "run_0000")])
                expect_failure(p, "first ingest into an empty file on a full disk", "full")
                check(listing(j("small-fs")) == ["empty.db"],
                      "files left beside an empty file by its failed ingest",
                      str(listing(j("small-fs"))))
                check(os.path.getsize(empty) == 0, "an empty file left holding nothing",
                      str(os.path.getsize(empty)))
                p = run([export, empty, j("empty-out")])
                check(p.returncode == 1 and "it is empty" in p.stderr,
                      "export of an empty file after a failed ingest on a full disk", p.stderr)
                os.remove(empty)

                # Less room than a page: the new store's file is made, its
                # first page cannot be, and the file goes again (its removal
                # cannot take the write lock, which would start a journal).
                with open(j("small-fs", "fill"), "wb") as f:
                    st = os.statvfs(j("small-fs"))
                    f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - 2048))
                p = run([ingest, j("small-fs", "tiny.db"), j("small", "run_0000")])
                expect_failure(p, "first ingest into a new store with no room left", "full")
                check(listing(j("small-fs")) == ["fill"],
                      "files left by a new store's ingest with no room left",
                      str(listing(j("small-fs"))))
                os.remove(j("small-fs", "fill"))

                # A reader that cannot make the store's -shm (the disk is full):
                # the system's reason is named, not only "disk I/O error".
                shutil.copy(base, j("small-fs", "r.db"))
                with open(j("small-fs", "fill"), "wb") as f:
                    st = os.statvfs(j("small-fs"))
                    f.write(b"\0" * (st.f_bavail * st.f_frsize))
                p = run([export, j("small-fs", "r.db"), j("r-out")])
                expect_failure(p, "export of a store whose -shm cannot be made", "r.db",
                               "No space left on device")
                for n in os.listdir(j("small-fs")):
                    os.remove(j("small-fs", n))

                # Disk full while exporting: a big store, the output on the tmpfs.
                full_disk_on_second_file(export, base, big, j("pair-fs"))
                out = j("small-fs", "out")
                check(run([export, base, out]).returncode == 0, "small export fits")
                old = open(os.path.join(out, "misses.jsonl"), "rb").read()
                p = run([export, big, out])
                expect_failure(p, "export onto a full disk", "No space left on device")
                check(open(os.path.join(out, "misses.jsonl"), "rb").read() == old,
                      "previous export intact after a full disk")
                check(sorted(os.listdir(out)) == ["dispatches.jsonl", "misses.jsonl"],
                      "no temporary files after a full disk", str(os.listdir(out)))

                # Disk full while writing the rejects file (the store has room): the
                # store is not committed, the old rejects file stays, exit 1.
                rdb = j("rejects.db")
                shutil.copy(base, rdb)
                with open(j("many-bad.jsonl"), "w") as f:
                    f.write(open(j("small", "run_0000", "misses.jsonl")).read())
                    for i in range(4000):
                        f.write('{"schema":1,"pad":"%s"}\n' % ("x" * 200))
                shutil.rmtree(j("small-fs", "out"))
                os.makedirs(j("small-fs", "rj"))
                rej = j("small-fs", "rj", "rejects")
                with open(rej, "w") as f:
                    f.write("the previous run's rejects\n")
                before = digest(rdb)
                p = run([ingest, "--skip-invalid", "--max-errors", "1", "--rejects", rej, rdb,
                         j("many-bad.jsonl")])
                expect_failure(p, "rejects onto a full disk", "rejects", "No space left on device")
                check(digest(rdb) == before, "store unchanged when the rejects file cannot be written")
                check(open(rej).read() == "the previous run's rejects\n",
                      "old rejects file untouched after a full disk")
                check(os.listdir(j("small-fs", "rj")) == ["rejects"], "no temporary rejects file left",
                      str(os.listdir(j("small-fs", "rj"))))
                shutil.rmtree(j("small-fs", "rj"))

                # A read-only store: ingest fails and changes nothing, export works.
                shutil.copy(base, j("small-fs", "ro.db"))
                subprocess.run(["mount", "-o", "remount,ro", j("small-fs")], check=True)
                ro = j("small-fs", "ro.db")
                before = digest(ro)
                p = run([ingest, ro, j("small", "run_0000")])
                expect_failure(p, "ingest into a read-only store", "read")
                check(digest(ro) == before, "read-only store unchanged")
                p = run([export, ro, j("ro-out")])
                check(p.returncode == 0, "export of a read-only store", p.stderr)
            finally:
                umount(j("small-fs"))

        hot_journal_on_read_only_media(ingest, export, base, j("base-out"), j("hot-fs"))
        copy_with_full_tmpdir(ingest, big, j("tmp-fs"), j("big-copy.db"))
        new_store_on_a_refusing_disk(ingest, j("small", "run_0000"), j("refusing"))
        directory_not_synced(ingest, export, base, big, j("unsynced-out"))

        # A directory where dispatches.jsonl should be: neither file is replaced.
        out = j("dir-out")
        check(run([export, base, out]).returncode == 0, "export beside a directory")
        old = open(os.path.join(out, "misses.jsonl"), "rb").read()
        os.remove(os.path.join(out, "dispatches.jsonl"))
        os.makedirs(os.path.join(out, "dispatches.jsonl", "x"))
        p = run([export, big, out])
        expect_failure(p, "export over a directory", "dispatches.jsonl", "is a directory")
        check(open(os.path.join(out, "misses.jsonl"), "rb").read() == old,
              "previous misses.jsonl intact beside a directory")
        check(listing(out) == ["dispatches.jsonl", "misses.jsonl"] and
              os.path.isdir(os.path.join(out, "dispatches.jsonl", "x")),
              "no temporary files and the directory untouched", str(listing(out)))

        # Exported files follow the umask, as any file the user creates.
        for mask, mode in ((0o077, 0o600), (0o022, 0o644), (0o002, 0o664)):
            out = j(f"umask-{mask:03o}")
            p = export_with_umask(export, base, out, mask)
            check(p.returncode == 0, f"export under umask {mask:03o}", p.stderr)
            for n in ("misses.jsonl", "dispatches.jsonl"):
                got = os.stat(os.path.join(out, n)).st_mode & 0o777
                check(got == mode, f"umask {mask:03o}: {n} has mode {got:03o}, want {mode:03o}")

        # A store locked by another process past the busy timeout.
        locked = j("locked.db")
        shutil.copy(base, locked)
        con = sqlite3.connect(locked, isolation_level=None)
        con.execute("BEGIN IMMEDIATE")
        p = run([ingest, "--busy-timeout", "300", locked, j("small", "run_0000")])
        expect_failure(p, "ingest into a locked store", "locked by another process or handle",
                       "300 ms")
        con.execute("ROLLBACK")
        con.close()
        run([export, locked, j("locked-out")])
        check(open(j("locked-out", "misses.jsonl")).read() ==
              open(j("base-out", "misses.jsonl")).read(), "locked store unchanged")

        # --busy-timeout 0 fails at once, even while opening: here another
        # process holds an exclusive lock that keeps readers out as well.
        con = sqlite3.connect(locked, isolation_level=None)
        con.execute("PRAGMA locking_mode=EXCLUSIVE")
        con.execute("BEGIN EXCLUSIVE")
        con.execute("DELETE FROM ingest_source")
        p = run_bounded([ingest, "--busy-timeout", "0", locked, j("small", "run_0000")])
        expect_failure(p, "ingest with --busy-timeout 0 into an exclusively locked store",
                       "locked by another process or handle", "more than 0 ms")
        con.execute("ROLLBACK")
        con.close()

        # A corrupt store: pages overwritten in the middle of a valid file.
        corrupt = j("corrupt.db")
        run([ingest, "-q", corrupt, j("big", "run_0000")])
        size = os.path.getsize(corrupt)
        with open(corrupt, "r+b") as f:
            for off in range(4096 * 2, size, 4096 * 3):
                f.seek(off)
                f.write(b"\xde\xad\xbe\xef" * 256)
        before = digest(corrupt)
        p = run([ingest, corrupt, j("small", "run_0000")])
        expect_failure(p, "ingest into a corrupt store", "corrupt")
        check(digest(corrupt) == before, "corrupt store not written")
        p = run([export, corrupt, j("corrupt-out")])
        expect_failure(p, "export of a corrupt store", "corrupt")

        # Not an SQLite file at all.
        junk = j("junk.db")
        with open(junk, "w") as f:
            f.write("this is a text file, not a database; " * 40)
        before = digest(junk)
        p = run([ingest, junk, j("small", "run_0000")])
        expect_failure(p, "ingest into a non-SQLite file", "not an fdx store")
        check(digest(junk) == before, "non-SQLite file unchanged")
        expect_failure(run([export, junk, j("junk-out")]), "export of a non-SQLite file",
                       "not an fdx store")

        # A store written by a newer fdx.
        newer = j("newer.db")
        shutil.copy(base, newer)
        con = sqlite3.connect(newer)
        con.execute("PRAGMA user_version = 99")
        con.close()
        before = digest(newer)
        expect_failure(run([ingest, newer, j("small", "run_0000")]), "ingest into a newer store",
                       "newer fdx")
        expect_failure(run([export, newer, j("newer-out")]), "export of a newer store", "newer fdx")
        check(digest(newer) == before, "newer store unchanged")

    return finish("faults")


if __name__ == "__main__":
    sys.exit(main())
