#!/usr/bin/env python3
"""Merges into a PostgreSQL store, against the server the pg_cluster fixture
started.

The same merges (random trees of host stores that keep gaining runs, some
with month buckets, merged again and again, in other orders and groupings)
into an SQLite store and into a PostgreSQL store give byte-identical exports
and the same history per cell, origin store and bucket; a merge of a store
unchanged since is a no-op (exit 0); a cycle through an SQLite store counts
nothing twice; 16 hosts merged concurrently, each several times while it
gains runs, alongside direct ingests, give exact totals; a merge killed with
SIGKILL at random points or cut by a server restart leaves the store before
or after it, and a rerun completes it exactly once; cells a source pruned and
observed again are merged whole, from and into PostgreSQL; a source given
twice is merged once.

Usage: pg_merge_test.py BINDIR GEN_FEED PG_CLUSTER_SH STATE
"""
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pglib
from pglib import LIMIT
from testlib import check, finish

BIN, GEN, CLUSTER, STATE = sys.argv[1:5]
TOOLS = pglib.Tools(BIN, GEN, "fdx-pg-merge-test-")
T, fdx, j, gen = TOOLS.tmp, TOOLS.fdx, TOOLS.j, TOOLS.gen
# The tools' working copies go here too: a SIGKILLed tool cannot remove its own.
os.environ["TMPDIR"] = T
PG = pglib.Cluster(CLUSTER, STATE, "fdx_m")
uri, psql, new_db = PG.uri, PG.psql, PG.new_db


def ingest(store, rd, at, *opts):
    r = fdx("fdx-ingest", "-q", "--at", at, *opts, store, rd)
    check(r.returncode == 0, f"ingest {rd} into {store}", r.stderr)


def merge(target, *sources):
    r = fdx("fdx-merge", "-q", target, *sources)
    check(r.returncode == 0, f"merge {' '.join(sources)} into {target}", r.stderr)
    return r


def exported(store):
    out = {}
    for kind in ("misses", "dispatches"):
        r = fdx("fdx-export", "--kind", kind, store, "-")
        check(r.returncode == 0, f"export {kind} of {store}", r.stderr)
        out[kind] = r.stdout
    return out


# Every history row as (kind, key, the store that observed it, bucket, count).
HISTORY = """
SELECT 'miss', wanted, backend, op, dtypes, kernel_source, kernel_revision_hash, cc_major,
       cc_minor, hardware_sku, driver_version,
       coalesce(o.store_id, (SELECT id FROM store_identity)), h.day, h.count
FROM miss_cell AS c JOIN cell_history AS h ON h.cell = c.cell_id
LEFT JOIN history_origin AS o ON o.id = h.origin
UNION ALL
SELECT 'dispatch', structure_key, backend, op, dtypes, kernel_source, kernel_revision_hash,
       cc_major, cc_minor, hardware_sku, driver_version,
       coalesce(o.store_id, (SELECT id FROM store_identity)), h.day, h.count
FROM dispatch_cell AS c JOIN cell_history AS h ON h.cell = c.cell_id
LEFT JOIN history_origin AS o ON o.id = h.origin
"""


def history(store, db=None):
    if db is None:
        con = sqlite3.connect(store)
        rows = [tuple(str(v) for v in row) for row in con.execute(HISTORY)]
        con.close()
        return sorted(rows)
    r = psql(HISTORY, db)
    check(r.returncode == 0, "reading the PostgreSQL history", r.stderr)
    return sorted(tuple(line.split("\t")) for line in r.stdout.splitlines())


def totals(store):
    return pglib.totals(fdx, store)


def same(name, lite, db):
    pg = uri(db)
    a, b = exported(lite), exported(pg)
    check(a == b and a["misses"], f"{name}: the exports are byte-identical")
    ha, hb = history(lite), history(None, db)
    check(ha == hb and ha, f"{name}: the same history per cell, origin and bucket",
          f"{len(ha)} rows against {len(hb)}")


def test_trees():
    """Host stores in a random tree (hosts -> racks -> fleet), rounds of runs and
    merges, into SQLite and PostgreSQL in different orders and groupings."""
    rng = random.Random(7)
    db = new_db()
    pg = uri(db)
    fleet = j("tree-fleet.db")
    hosts = [j(f"tree-h{i}.db") for i in range(6)]
    racks = [j(f"tree-r{i}.db") for i in range(2)]
    feeds = [gen(f"tree{i}", 4, 1, 100 + i) for i in range(6)]
    days = ["2026-03-10", "2026-05-02", "2026-06-15", "2026-06-20", "2026-09-01",
            "2026-10-01"]
    for rnd in range(4):
        for i, h in enumerate(hosts):
            if rng.random() < 0.8:
                opts = ["--daily-days", "20"] if i % 3 == 0 and rnd == 0 else []
                ingest(h, feeds[i][rnd], rng.choice(days[rnd:rnd + 3]), *opts)
        present = [h for h in hosts if os.path.exists(h)]
        for r, rack in enumerate(racks):
            mine = [h for k, h in enumerate(present) if k % 2 == r]
            if mine:
                merge(rack, *mine)
        # SQLite: racks, then some hosts directly; PostgreSQL: the other way
        # round, one source per run, shuffled.
        srcs = [r for r in racks if os.path.exists(r)] + rng.sample(present, min(3, len(present)))
        merge(fleet, *srcs)
        order = srcs[:]
        rng.shuffle(order)
        for s in order:
            merge(pg, s)
        same(f"tree round {rnd}", fleet, db)
    # Every host again, in one run: unchanged sources are skipped unread.
    r = merge(pg, *hosts, *racks)
    merge(fleet, *hosts, *racks)
    same("tree: every host again", fleet, db)
    r = fdx("fdx-merge", pg, hosts[1])
    check(r.returncode == 0 and "already merged" in r.stderr,
          "a merge of an unchanged store into PostgreSQL is a no-op", r.stderr)
    # A cycle: the PostgreSQL store merged into an SQLite store, that back.
    side = j("tree-side.db")
    merge(side, pg)
    ingest(side, feeds[0][0], "2026-11-01")
    merge(pg, side)
    merge(fleet, side)
    same("tree: a cycle through an SQLite store", fleet, db)
    r = fdx("fdx-merge", pg, pg)
    check(r.returncode == 0 and "itself" in r.stderr,
          "merging a PostgreSQL store into itself does nothing", r.stderr)
    same("tree: merged into itself", fleet, db)


def test_many_writers():
    """16 hosts, each merged 3 times while it gains runs, and direct ingests,
    all at once into one PostgreSQL store: exact totals."""
    db = new_db()
    pg = uri(db)
    fdx("fdx-ingest", pg, "/dev/null")
    feeds = [gen(f"many{i}", 3, 2, 200 + i, cells=80, lines=400) for i in range(16)]
    direct = gen("direct", 4, 2, 300, cells=80, lines=400)
    errors = []

    def host(i):
        h = j(f"many-h{i}.db")
        for k, rd in enumerate(feeds[i]):
            r = fdx("fdx-ingest", "-q", h, rd)
            m = fdx("fdx-merge", "-q", pg, h)
            if r.returncode or m.returncode:
                errors.append(r.stderr + m.stderr)

    def ingester():
        for k, rd in enumerate(direct):
            r = fdx("fdx-ingest", "-q", "--run-id", f"d{k}", pg, rd)
            if r.returncode:
                errors.append(r.stderr)

    threads = [threading.Thread(target=host, args=(i,)) for i in range(16)]
    threads.append(threading.Thread(target=ingester))
    for t in threads:
        t.start()
    for t in threads:
        t.join(LIMIT * 4)
    check(not errors, "16 concurrent merges and ingests succeed", "\n".join(errors[:3]))
    want = j("many-want.db")
    for rd in [rd for f in feeds for rd in f] + direct:
        fdx("fdx-ingest", "-q", want, rd)
    check(totals(pg) == totals(want), "16 hosts merged concurrently with ingests: exact totals")
    return feeds, want


def test_killed(feeds):
    """Merges killed at random points, then rerun: exactly once."""
    rng = random.Random(13)
    hosts = [j(f"many-h{i}.db") for i in range(16)]
    hosts_only = j("many-hosts.db")
    for f in feeds:
        for rd in f:
            fdx("fdx-ingest", "-q", hosts_only, rd)
    goal = totals(hosts_only)
    for attempt in range(4):
        db = new_db()
        pg = uri(db)
        fdx("fdx-ingest", pg, "/dev/null")
        for k in range(0, 16, 4):
            p = subprocess.Popen([os.path.join(BIN, "fdx-merge"), "-q", pg, *hosts[k:k + 4]],
                                 stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, 0.4))
            p.send_signal(signal.SIGKILL)
            p.wait()
        mid = fdx("fdx-export", "--kind", "misses", pg, "-")
        check(mid.returncode == 0, f"kill round {attempt}: the store reads after the kills",
              mid.stderr)
        merge(pg, *hosts)
        check(totals(pg) == goal, f"kill round {attempt}: every host counted exactly once")
        merge(pg, *hosts)
        check(totals(pg) == goal, f"kill round {attempt}: a repeat changes nothing")


def test_restart(feeds):
    """The server restarted mid-merge: the merge fails with a reason or
    completes; a rerun completes it exactly once."""
    hosts = [j(f"many-h{i}.db") for i in range(16)]
    db = new_db()
    pg = uri(db)
    fdx("fdx-ingest", pg, "/dev/null")
    failures = []

    def merger():
        for k in range(0, 16, 2):
            r = fdx("fdx-merge", "-q", pg, *hosts[k:k + 2])
            if r.returncode != 0:
                failures.append(r.stderr)

    t = threading.Thread(target=merger)
    t.start()
    time.sleep(0.5)
    r = subprocess.run(["bash", CLUSTER, "restart", STATE], capture_output=True, text=True)
    check(r.returncode == 0, "the server restarts", r.stderr)
    t.join(LIMIT)
    for msg in failures:
        check("postgresql" in msg or "PostgreSQL" in msg or "connect" in msg,
              "a merge cut by the restart says why", msg)
    merge(pg, *hosts)
    check(totals(pg) == totals(j("many-hosts.db")),
          "a restart mid-merge loses nothing and counts nothing twice")


def top_op(store):
    con = sqlite3.connect(store)
    op = con.execute("SELECT op FROM miss_cell ORDER BY count DESC LIMIT 1").fetchone()[0]
    con.close()
    return op


def test_pruned_and_observed_again():
    """A host prunes cells a PostgreSQL store merged, then observes them again:
    the next merge brings all of the new observations, as into SQLite; and a
    PostgreSQL store that does the same, merged into an SQLite store, too."""
    db = new_db()
    pg = uri(db)
    host, fleet, side = j("pr-host.db"), j("pr-fleet.db"), j("pr-side.db")
    f = gen("pr", 3, 1, 300)
    ingest(host, f[0], "2026-10-01")
    merge(fleet, host)
    merge(pg, host)
    op = top_op(host)
    r = fdx("fdx-prune", "-q", host, "--op", op)
    check(r.returncode == 0, "prune the host", r.stderr)
    ingest(host, f[1], "2026-10-01")
    merge(fleet, host)
    merge(pg, host)
    same("a host's pruned cells observed again", fleet, db)
    want = j("pr-want.db")
    for rd in f[:2]:
        ingest(want, rd, "2026-10-01")
    check(totals(pg) == totals(want), "the PostgreSQL store gained every new observation")
    merge(side, pg)
    r = fdx("fdx-prune", "-q", pg, "--op", op)
    check(r.returncode == 0, "prune the PostgreSQL store", r.stderr)
    ingest(pg, f[2], "2026-10-01")
    merge(side, pg)
    ingest(want, f[2], "2026-10-01")
    check(totals(side) == totals(want),
          "a PostgreSQL store's pruned cells observed again reach an SQLite store")


def test_source_twice():
    """A source given twice in one merge is merged once, and said to be, as
    into SQLite (the second was staged and applied again, and counted as a
    second store merged)."""
    db = new_db()
    pg = uri(db)
    host, fleet = j("tw-host.db"), j("tw-fleet.db")
    ingest(host, gen("tw", 1, 1, 400)[0], "2026-10-01")
    said = []
    for target in (pg, fleet):
        r = fdx("fdx-merge", target, host, host)
        check(r.returncode == 0, f"merge a source twice into {target}", r.stderr)
        said.append(r.stderr.strip().splitlines()[-1])
    check(said[0] == said[1] and "1 store merged, 1 already merged" in said[0],
          "a source given twice: merged once, as into SQLite", said)
    same("a source given twice", fleet, db)


def main():
    try:
        test_source_twice()
        test_pruned_and_observed_again()
        test_trees()
        feeds, _ = test_many_writers()
        test_killed(feeds)
        test_restart(feeds)
    finally:
        shutil.rmtree(T, ignore_errors=True)
    return finish("pg_merge")


if __name__ == "__main__":
    sys.exit(main())
