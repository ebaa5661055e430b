#!/usr/bin/env python3
"""fdx-prune of a PostgreSQL store, against the server the pg_cluster fixture
started.

The same feeds in an SQLite and a PostgreSQL store, the same prunes (each
filter kind, --before, --dry-run, one that matches nothing) on both: the
printed counts are equal and the exports byte-identical after each; a host
merged before a prune and again after gaining runs brings only its gain, as
in SQLite; a prune killed with SIGKILL mid-push leaves the store before or
after it.

Usage: pg_prune_test.py BINDIR GEN_FEED PG_CLUSTER_SH STATE
"""
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pglib
from testlib import check, finish

BIN, GEN, CLUSTER, STATE = sys.argv[1:5]
TOOLS = pglib.Tools(BIN, GEN, "fdx-pg-prune-test-")
T, fdx, j, gen = TOOLS.tmp, TOOLS.fdx, TOOLS.j, TOOLS.gen
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


def main():
    try:
        test_filters()
        feeds = test_merge_after_prune()
        test_killed(feeds)
    finally:
        shutil.rmtree(T, ignore_errors=True)
    return finish("pg_prune")


if __name__ == "__main__":
    sys.exit(main())
