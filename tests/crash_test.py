#!/usr/bin/env python3
"""Crash safety: SIGKILL fdx-ingest and fdx-export at random moments.

After each killed ingest the store passes PRAGMA integrity_check, exports
either the state before that ingest or the state after it, and running the
same ingest again (same --run-id) completes it exactly once. After each killed
export the target files are either the previous complete files or the new
complete ones, and the next export removes the temporary files left behind.

Kills at exact steps (an LD_PRELOAD shim, tests/fault_shim.c, named by the
FDX_FAULT_SHIM environment variable) check the pair: a kill while either file
is written or before the first rename leaves both previous files; a kill
between the two renames leaves the new misses.jsonl beside the previous
dispatches.jsonl, the one window the README documents. The shim also cuts a
store short under its export, which must then fail and leave the previous
files. The same shim logs
deletions and directory syncs: a rollback journal's deletion, a commit, is
synced at once.

Usage: crash_test.py FDX_INGEST FDX_EXPORT GEN_FEED [KILLS]
"""
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

from testlib import check, finish, make_hot_journal, skip


def run(cmd):
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {p.stderr.decode(errors='replace')}")
    return p


def read_export(out):
    return tuple(open(os.path.join(out, n), "rb").read() for n in ("misses.jsonl", "dispatches.jsonl"))


def killed_after(cmd, delay):
    """Starts cmd, SIGKILLs it after delay seconds; True if it was still running."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    alive = p.poll() is None
    if alive:
        p.send_signal(signal.SIGKILL)
    p.wait()
    return alive


def timed(cmd):
    t = time.monotonic()
    run(cmd)
    return time.monotonic() - t


def shim_env(shim, **settings):
    """The environment that preloads the shim (before the sanitizers' runtime,
    in a sanitizer build) with its settings."""
    return dict(os.environ, LD_PRELOAD=shim, **settings,
                ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")


def exact_kills(export, shim, out, stores, states):
    """Kills exports of stores[1] over an export of stores[0] at exact steps."""
    env = shim_env(shim)
    old, new = states
    cases = [("FDX_KILL_AT_FSYNC", 1, old, "while misses.jsonl is written"),
             ("FDX_KILL_AT_FSYNC", 2, old, "while dispatches.jsonl is written"),
             ("FDX_KILL_AT_RENAME", 1, old, "before the first rename"),
             ("FDX_KILL_AT_RENAME", 2, (new[0], old[1]), "between the two renames")]
    for var, n, want, when in cases:
        run([export, stores[0], out])
        p = subprocess.run([export, stores[1], out], env=dict(env, **{var: str(n)}),
                           capture_output=True)
        check(p.returncode == -signal.SIGKILL, f"export killed {when}: exit {p.returncode}",
              p.stderr.decode(errors="replace"))
        check(read_export(out) == want, f"export killed {when}: wrong files")
        run([export, stores[1], out])
        check(read_export(out) == new and sorted(os.listdir(out)) ==
              ["dispatches.jsonl", "misses.jsonl"],
              f"export after a kill {when}: not the new pair alone", str(os.listdir(out)))


def signals_leave_no_temporary_file(ingest, export, report, shim, j, stores, old):
    """SIGTERM, as a program's handler takes it, while an export, a report and
    a rejects file are written: each program removes its temporary files and
    ends by the signal; the previous output stays."""
    out = j("signalled")
    run([export, stores[0], out])
    run([report, "-q", stores[0], j("signalled", "report.html")])
    page = open(j("signalled", "report.html"), "rb").read()
    with open(j("bad.jsonl"), "w") as f:
        f.write("not json\n")
    rejects = j("signalled", "rejects.jsonl")
    open(rejects, "w").close()
    cases = [("export", [export, stores[1], out], 1), ("export", [export, stores[1], out], 2),
             ("report", [report, "-q", stores[1], j("signalled", "report.html")], 1),
             ("rejects", [ingest, "-q", "--skip-invalid", "--rejects", rejects, j("rejects.db"),
                          j("bad.jsonl")], 1)]
    for what, cmd, n in cases:
        p = subprocess.run(cmd, env=dict(shim_env(shim), FDX_KILL_AT_FSYNC=str(n),
                                         FDX_KILL_SIGNAL=str(int(signal.SIGTERM))),
                           capture_output=True)
        check(p.returncode == -signal.SIGTERM, f"{what} ended at fsync {n}: exit {p.returncode}",
              p.stderr.decode(errors="replace"))
        left = [n for n in os.listdir(out) if ".fdx-tmp." in n]
        check(not left, f"{what} ended by SIGTERM at fsync {n} left its temporary files", str(left))
        check(read_export(out) == old, f"{what} ended by SIGTERM: the previous export changed")
        check(open(j("signalled", "report.html"), "rb").read() == page,
              f"{what} ended by SIGTERM: the previous report changed")
        check(os.path.getsize(rejects) == 0, f"{what} ended by SIGTERM: the rejects file changed")


def store_cut_short(export, shim, out, stores, old):
    """Another process truncates stores[1] under its export over an export of
    stores[0] (the shim cuts it to a quarter as the export writes its first
    output): the export fails with exit 1, naming the store, and leaves the
    previous files. Mapped, the store's missing pages killed it with SIGBUS."""
    run([export, stores[0], out])
    cut = stores[1] + ".cut"
    shutil.copy(stores[1], cut)
    env = shim_env(shim, FDX_SHRINK_FILE=cut, FDX_SHRINK_TO=str(os.path.getsize(cut) // 4))
    p = subprocess.run([export, cut, out], env=env, capture_output=True)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 1 and cut in err, f"export of a store cut short: exit {p.returncode}", err)
    check(read_export(out) == old and sorted(os.listdir(out)) == ["dispatches.jsonl", "misses.jsonl"],
          "export of a store cut short: the previous files alone", str(os.listdir(out)))


def hot_journal_refused(export, store, out, what):
    """A reader finds a store whose writer was killed mid-commit, journal
    and all: it fails, naming the journal and what rolls it back, and
    leaves the store as it found it."""
    def files():
        return [open(store + s, "rb").read() if os.path.exists(store + s) else None
                for s in ("", "-journal")]
    before = files()
    p = subprocess.run([export, store, out], capture_output=True)
    err = p.stderr.decode(errors="replace")
    check(p.returncode != 0 and "-journal" in err and "/dev/null" in err,
          f"{what}: a reader of a store with a hot journal", err)
    check(files() == before, f"{what}: the reader changed the store or its journal")


def hot_journal(ingest, export, j):
    """A hot journal made on purpose: a writer killed while its transaction
    had already written pages into the store (rollback journal mode)."""
    store = j("hot.db")
    run([ingest, "-q", store, j("small", "run_0000")])
    run([export, store, j("hot-before")])
    before = read_export(j("hot-before"))
    make_hot_journal(store)
    check(os.path.getsize(store + "-journal") > 0, "the hot journal was not made")
    hot_journal_refused(export, store, j("hot-probe"), "a hot journal")
    run([ingest, "-q", store, os.devnull])
    run([export, store, j("hot-after")])
    check(read_export(j("hot-after")) == before,
          "the writer after a hot journal did not roll the store back")


def journal_deletions_synced(ingest, shim, j):
    """A commit through a rollback journal (a new store's first) takes effect
    when the journal is deleted: unless that deletion reaches the disk (its
    directory synced) before the writer goes on, a power cut after it said
    it committed brings the journal back, and the commit is rolled back."""
    log = j("sync.log")
    env = shim_env(shim, FDX_SYNC_LOG=log)
    p = subprocess.run([ingest, "-q", j("synced.db"), j("small", "run_0000")], env=env,
                       capture_output=True, text=True)
    check(p.returncode == 0 and os.path.exists(log), "ingest into a new store under the shim",
          p.stderr)
    events = [line.rstrip("\n").split(" ", 1) for line in open(log)] if os.path.exists(log) else []
    deleted = [i for i, (what, path) in enumerate(events)
               if what == "unlink" and path.endswith("synced.db-journal")]
    check(deleted, "a new store's first commit deleted no journal", str(events))
    for i in deleted:
        want = ["sync", os.path.realpath(os.path.dirname(events[i][1]))]
        check(events[i + 1:i + 2] == [want], "a journal's deletion was not synced at once",
              str(events[i:]))


def new_store_kills(ingest, export, j, big, kills, rng):
    """Kills the first ingest into a store that does not exist yet: its commit
    goes through a rollback journal. The store a kill leaves is read as it
    is (readers first, before any writer rolls the journal back): no store,
    an empty file, an empty store, or the whole ingest; the same ingest then
    completes it."""
    new = j("new.db")
    run([ingest, "-q", "--run-id", "big", new] + big)
    run([export, new, j("new-out")])
    after = read_export(j("new-out"))
    empty = (b"", b"")
    full = timed([ingest, "-q", "--run-id", "big", j("new-timing.db")] + big)
    seen = {"none": 0, "blank": 0, "empty": 0, "after": 0, "journal": 0}
    for i in range(kills):
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(new + suffix):
                os.remove(new + suffix)
        killed_after([ingest, "-q", "--run-id", "big", new] + big, full * rng.uniform(0, 1.2))
        if not os.path.exists(new):
            seen["none"] += 1
        else:
            journal = os.path.exists(new + "-journal")
            blank = os.path.getsize(new) == 0
            p = subprocess.run([export, new, j("probe")], capture_output=True)
            if blank:
                # killed before the commit wrote a page: the journal is not
                # hot (SQLite deletes it) and the file holds nothing yet
                seen["blank"] += 1
                check(p.returncode != 0 and b"(it is empty)" in p.stderr,
                      f"new-store kill {i}: a reader of an empty file",
                      p.stderr.decode(errors="replace"))
            elif p.returncode != 0 and journal:
                seen["journal"] += 1
                hot_journal_refused(export, new, j("probe"), f"new-store kill {i}")
            else:
                check(p.returncode == 0, f"new-store kill {i}: export of what the kill left "
                      "failed", p.stderr.decode(errors="replace"))
                state = read_export(j("probe")) if p.returncode == 0 else None
                check(state in (empty, after),
                      f"new-store kill {i}: neither empty nor the whole ingest")
                seen["empty" if state == empty else "after"] += 1
            con = sqlite3.connect(new)
            integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
            con.close()
            check(integrity == "ok", f"new-store kill {i}: integrity_check", integrity)
        run([ingest, "-q", "--run-id", "big", new] + big)
        run([export, new, j("probe")])
        check(read_export(j("probe")) == after,
              f"new-store kill {i}: ingesting again did not complete it exactly once")
    print(f"new-store ingest kills: {seen}")


def main():
    ingest, export, gen = sys.argv[1:4]
    report = os.path.join(os.path.dirname(export), "fdx-report")
    kills = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    rng = random.Random(4242)
    with tempfile.TemporaryDirectory(prefix="fdx-crash-") as tmp:
        j = lambda *p: os.path.join(tmp, *p)
        run([sys.executable, gen, j("small"), "--runs", "1", "--lines", "300", "--cells", "100",
             "--seed", "1"])
        run([sys.executable, gen, j("big"), "--runs", "2", "--lines", "20000", "--cells", "15000",
             "--candidates", "0.3", "--seed", "2"])
        big = [j("big", "run_0000"), j("big", "run_0001")]
        run([ingest, "-q", j("base.db"), j("small", "run_0000")])
        run([export, j("base.db"), j("before")])
        before = read_export(j("before"))
        shutil.copy(j("base.db"), j("after.db"))
        full = timed([ingest, "-q", "--run-id", "big", j("after.db")] + big)
        run([export, j("after.db"), j("after")])
        after = read_export(j("after"))

        seen = {"before": 0, "after": 0, "finished": 0}
        for i in range(kills):
            work = j("work.db")
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(work + suffix):
                    os.remove(work + suffix)
            shutil.copy(j("base.db"), work)
            late = i % 2  # every other kill aims at the end of the ingest (the commit)
            delay = full * (rng.uniform(0.8, 1.3) if late else rng.uniform(0, 1))
            alive = killed_after([ingest, "-q", "--run-id", "big", work] + big, delay)
            if not alive:
                seen["finished"] += 1
            con = sqlite3.connect(work)
            integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
            con.close()
            check(integrity == "ok", f"kill {i}: integrity_check", integrity)
            if integrity != "ok":
                continue
            run([export, work, j("probe")])
            state = read_export(j("probe"))
            check(state in (before, after), f"kill {i}: the store is neither before nor after the ingest")
            if state == before:
                seen["before"] += 1
            elif state == after:
                seen["after"] += 1
            run([ingest, "-q", "--run-id", "big", work] + big)
            run([export, work, j("probe")])
            check(read_export(j("probe")) == after,
                  f"kill {i}: ingesting again did not complete it exactly once")
        print(f"ingest kills: {seen}")

        hot_journal(ingest, export, j)
        new_store_kills(ingest, export, j, big, kills // 2, rng)

        # Export: alternate between the two stores so every kill has an older
        # complete version in place to be replaced.
        out = j("out")
        run([export, j("base.db"), out])
        full = timed([export, j("after.db"), out])
        left_behind = 0
        for i in range(kills):
            src, state = (j("base.db"), before) if i % 2 else (j("after.db"), after)
            killed_after([export, src, out], rng.uniform(0, full * 1.2))
            files = read_export(out)
            for k, name in enumerate(("misses", "dispatches")):
                check(files[k] in (before[k], after[k]),
                      f"export kill {i}: {name}.jsonl is neither old nor new")
            left_behind += len([n for n in os.listdir(out) if ".fdx-tmp." in n])
        run([export, j("after.db"), out])
        stale = [n for n in os.listdir(out) if n not in ("misses.jsonl", "dispatches.jsonl")]
        check(not stale, "temporary files left after a completed export", str(stale))
        check(read_export(out) == after, "the final export is wrong")
        print(f"export kills: {kills}, temporary files seen after kills: {left_behind}")

        shim = os.environ.get("FDX_FAULT_SHIM")
        if shim and os.path.exists(shim):
            exact_kills(export, shim, j("exact"), (j("base.db"), j("after.db")), (before, after))
            signals_leave_no_temporary_file(ingest, export, report, shim, j,
                                            (j("base.db"), j("after.db")), before)
            store_cut_short(export, shim, j("exact"), (j("base.db"), j("after.db")), before)
            journal_deletions_synced(ingest, shim, j)
        else:
            skip(37, "exact export kills, signals while outputs are written, a store cut short and "
                 "synced journal deletions: "
                 "FDX_FAULT_SHIM does not name the fault shim")
    return finish("crash")


if __name__ == "__main__":
    sys.exit(main())
