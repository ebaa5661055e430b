#!/usr/bin/env python3
"""fdx-prune of a PostgreSQL store, against the server the pg_cluster fixture
started.

The same feeds in an SQLite and a PostgreSQL store, the same prunes (each
filter kind, --before, --dry-run, one that matches nothing) on both: the
printed counts are equal and the exports byte-identical after each; a host
merged before a prune and again after gaining runs brings only its gain, as
in SQLite; the counts a prune prints are those its transaction applied
(prune_log's) when another writer commits between the prune and its push; a
prune killed with SIGKILL mid-push leaves the store before or after it; a
prune of a database holding no store is refused and creates none.

Usage: pg_prune_test.py BINDIR GEN_FEED PG_CLUSTER_SH STATE
"""
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pglib
from pglib import LIMIT
from testlib import check, finish

BIN, GEN, CLUSTER, STATE = sys.argv[1:5]
TOOLS = pglib.Tools(BIN, GEN, "fdx-pg-prune-test-")
T, fdx, j, gen = TOOLS.tmp, TOOLS.fdx, TOOLS.j, TOOLS.gen
# The tools' working copies go here too: a SIGKILLed tool cannot remove its own.
os.environ["TMPDIR"] = T
PG = pglib.Cluster(CLUSTER, STATE, "fdx_p")
uri, psql, new_db = PG.uri, PG.psql, PG.new_db


def run_ok(name, *args):
    r = fdx(name, *args)
    check(r.returncode == 0, f"{name} {' '.join(args)}", r.stderr)
    return r


def exported(store):
    return tuple(run_ok("fdx-export", "--kind", k, store, "-").stdout
                 for k in ("misses", "dispatches"))


def values(lite, column, n=2):
    con = sqlite3.connect(lite)
    rows = con.execute(f"SELECT {column}, count(*) FROM miss_cells GROUP BY 1 "
                       "ORDER BY 2 DESC, 1").fetchall()
    con.close()
    return [str(r[0]) for r in rows[:n]]


DAYS = ["2026-03-10", "2026-04-02", "2026-05-15", "2026-06-20"]


def fill(stores, feeds):
    for rd, day in zip(feeds, DAYS):
        for s in stores:
            run_ok("fdx-ingest", "-q", "--at", day, s, rd)


def prune_both(lite, pg, *args):
    a = fdx("fdx-prune", *args, lite)
    b = fdx("fdx-prune", *args, pg)
    check(a.returncode == 0 and b.returncode == 0, f"fdx-prune {' '.join(args)} on both",
          a.stderr + b.stderr)
    check(a.stdout == b.stdout and a.stderr == b.stderr,
          f"fdx-prune {' '.join(args)}: the same counts printed", a.stderr + "|" + b.stderr)
    check(exported(lite) == exported(pg), f"fdx-prune {' '.join(args)}: identical exports")
    return a


def test_filters():
    feeds = gen("filters", 4, 3, 300)
    lite, db = j("filters.db"), new_db()
    pg = uri(db)
    fill([lite, pg], feeds)
    check(exported(lite) == exported(pg), "the same feeds: identical exports")
    op, = values(lite, "op", 1)
    before = exported(pg)
    r = prune_both(lite, pg, "--dry-run", "--op", op)
    check("would remove" in r.stderr and " 0 " not in r.stderr.split("would remove")[1][:3],
          "--dry-run counts cells", r.stderr)
    check(exported(pg) == before, "--dry-run changes nothing")
    prune_both(lite, pg, "--op", op)
    check(exported(pg) != before, "the prune removed cells")
    prune_both(lite, pg, "--op", "NoSuchOp")
    prune_both(lite, pg, "--driver", values(lite, "driver_version", 1)[0])
    prune_both(lite, pg, "--revision", values(lite, "kernel_revision", 1)[0])
    prune_both(lite, pg, "--source", values(lite, "kernel_source", 1)[0])
    prune_both(lite, pg, "--cc", values(lite, "compute_capability", 1)[0])
    prune_both(lite, pg, "--sku", values(lite, "hardware_sku", 1)[0],
               "--op", values(lite, "op", 1)[0])
    prune_both(lite, pg, "--before", "2026-05-01")
    logs = psql("SELECT count(*) FROM prune_log JOIN ingest_ledger AS l ON l.id = ledger_id "
                "WHERE l.kind = 'prune'", db)
    con = sqlite3.connect(lite)
    n = con.execute("SELECT count(*) FROM prune_log").fetchone()[0]
    con.close()
    check(logs.stdout.strip() == str(n) and n == 8, "a ledger row and prune_log row per prune",
          logs.stdout + logs.stderr)


def test_merge_after_prune():
    feeds = gen("host", 4, 5, 500)
    host, lite, db = j("host.db"), j("merged.db"), new_db()
    pg = uri(db)
    fill([host], feeds[:2])
    run_ok("fdx-merge", "-q", lite, host)
    run_ok("fdx-merge", "-q", pg, host)
    sku, = values(lite, "hardware_sku", 1)
    prune_both(lite, pg, "--sku", sku)
    for rd, day in zip(feeds[2:], DAYS[2:]):
        run_ok("fdx-ingest", "-q", "--at", day, host, rd)
    run_ok("fdx-merge", "-q", lite, host)
    run_ok("fdx-merge", "-q", pg, host)
    a, b = exported(lite), exported(pg)
    check(a == b and a[0], "a host merged again after a prune brings only its gain, as in SQLite")
    check(a != exported(host), "the pruned counts did not come back")
    return feeds


def removed(stderr):
    """The counts fdx-prune printed: miss cells, dispatch cells, observations."""
    m = re.search(r"removed (\d+) miss cells? and (\d+) dispatch cells? \((\d+) observations\)",
                  stderr)
    return tuple(int(x) for x in m.groups()) if m else None


def test_writer_between(feeds):
    """A writer commits after the prune was asked for and before its push
    (which waits for the history settings' lock the writer holds): the
    printed counts are the applied ones, prune_log's."""
    db = new_db()
    pg = uri(db)
    fill([pg], feeds[:2])
    op = psql("SELECT op FROM miss_cell GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1",
              db).stdout.strip()
    holder = subprocess.Popen(["psql", "-v", "ON_ERROR_STOP=1", "-qAtX", pg],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    holder.stdin.write("BEGIN;\nSELECT 1 FROM history_config FOR UPDATE;\n\\echo locked\n")
    holder.stdin.flush()
    while holder.stdout.readline().strip() not in ("locked", ""):
        pass
    prune = subprocess.Popen([os.path.join(BIN, "fdx-prune"), "--op", op, pg],
                             stderr=subprocess.PIPE, text=True)
    waiting = "0"
    while prune.poll() is None and waiting == "0":
        waiting = psql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock'", db).stdout.strip()
        time.sleep(0.05)
    check(waiting != "0", "the prune's push waits for the history settings' lock")
    # One more cell the filter passes, and more observations in those it had.
    holder.stdin.write(
        "INSERT INTO miss_cell (wanted, backend, op, dtypes, kernel_source, kernel_revision_hash, "
        "cc_major, cc_minor, hardware_sku, driver_version, count) "
        "SELECT wanted || '-late', backend, op, dtypes, kernel_source, kernel_revision_hash, "
        f"cc_major, cc_minor, hardware_sku, driver_version, 5 FROM miss_cell WHERE op = '{op}' "
        "ORDER BY cell_id LIMIT 1;\n"
        f"UPDATE dispatch_cell SET count = count + 1000 WHERE op = '{op}';\nCOMMIT;\n")
    holder.stdin.close()
    holder.wait(LIMIT)
    try:
        _, err = prune.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        prune.kill()
        _, err = prune.communicate()
    check(prune.returncode == 0, "the prune with a writer between", err)
    logged = psql("SELECT miss_cells, dispatch_cells, observations FROM prune_log", db).stdout
    logged = tuple(int(x) for x in logged.split()) or None
    check(removed(err) is not None and removed(err) == logged,
          "the printed counts are prune_log's", f"printed: {err}prune_log: {logged}")
    left = psql(f"SELECT count(*) FROM miss_cell WHERE op = '{op}'", db).stdout.strip()
    check(left == "0", "the late cell was pruned too", left)


def test_killed(feeds):
    rng = random.Random(17)
    lite = j("kill.db")
    fill([lite], feeds)
    op, = values(lite, "op", 1)
    full = exported(lite)
    run_ok("fdx-prune", "-q", "--op", op, lite)
    pruned = exported(lite)
    seen = set()
    for attempt in range(6):
        db = new_db()
        pg = uri(db)
        fill([pg], feeds)
        p = subprocess.Popen([os.path.join(BIN, "fdx-prune"), "-q", "--op", op, pg],
                             stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 0.3))
        p.send_signal(signal.SIGKILL)
        p.wait()
        now = exported(pg)
        check(now in (full, pruned), f"kill {attempt}: the store is before or after the prune")
        seen.add(now == pruned)
        run_ok("fdx-prune", "-q", "--op", op, pg)
        check(exported(pg) == pruned, f"kill {attempt}: a rerun completes the prune")


def test_empty_database():
    """A prune (or its dry run) of a database that holds no store is refused,
    as SQLite's "no such store": it created the fdx tables and logged a prune."""
    db = new_db()
    for args in (["--op", "x"], ["-n", "--op", "x"]):
        r = fdx("fdx-prune", *args, uri(db))
        check(r.returncode == 1 and "not an fdx store" in r.stderr,
              f"fdx-prune {' '.join(args)} of an empty database: exit {r.returncode}", r.stderr)
    r = psql("SELECT count(*) FROM pg_tables WHERE tablename = 'fdx_meta'", db)
    check(r.stdout.strip() == "0", "the empty database holds no fdx tables", r.stdout + r.stderr)


def main():
    try:
        test_empty_database()
        test_filters()
        feeds = test_merge_after_prune()
        test_writer_between(feeds)
        test_killed(feeds)
    finally:
        shutil.rmtree(T, ignore_errors=True)
    return finish("pg_prune")


if __name__ == "__main__":
    sys.exit(main())
