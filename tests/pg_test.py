#!/usr/bin/env python3
"""The PostgreSQL store, against the server the pg_cluster fixture started.

Every section works in a database of its own. The same feeds ingested into an
SQLite store and into a PostgreSQL store export byte for byte the same (the
golden vector sets, generated feeds, and a feed of edge cases: candidates
replaced and kept, counts saturating at 2^63-1, unicode keys); the twelve
views hold the same rows in both, also after merges; every tool takes the URI;
--run-id is exactly-once, also between concurrent writers and after an ingest
killed at a random point or a server restart; one handle through many write
transactions counts each once, as an SQLite one does; concurrent
ingests give exact totals; the password of a URI never shows; a PostgreSQL
store whose tables were altered is refused, as a crafted SQLite file is; bad
URIs fail with exit 1 and a message instead of hanging; the least-privilege
roles of docs/FLEET.md work and can do no more.

Usage: pg_test.py BINDIR GEN_FEED PG_CLUSTER_SH STATE DATA_DIR
"""
import re
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pglib
from testlib import check, finish, run_bounded

BIN, GEN, CLUSTER, STATE, DATA = sys.argv[1:6]
T = tempfile.mkdtemp(prefix="fdx-pg-test-")
# The tools' working copies go here too: a SIGKILLed tool cannot remove its own.
os.environ["TMPDIR"] = T
SECRET = "Pw-s3cret-9f8e7d"
LIMIT = 300  # seconds before a command counts as hung


def tool(name):
    return os.path.join(BIN, name)


def fdx(name, *args, env=None):
    cmd = [tool(name), *args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                              timeout=LIMIT, env=env)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, -9, "", f"timed out after {LIMIT} s")


PG = pglib.Cluster(CLUSTER, STATE, "fdx_t")
uri, psql, new_db = PG.uri, PG.psql, PG.new_db


def runs_of(d):
    return sorted(os.path.join(d, x) for x in os.listdir(d)
                  if os.path.isdir(os.path.join(d, x)))


def export(store, out):
    shutil.rmtree(out, ignore_errors=True)
    return fdx("fdx-export", store, out)


def read_dir(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}


def summary(r):
    return [l for l in r.stderr.splitlines() if "cells added" in l]


def same_as_sqlite(name, run_dirs, at=None):
    """Ingests run_dirs one by one into both kinds of store; the exports and the
    counts each ingest reports must agree."""
    db = new_db()
    lite = os.path.join(T, f"{name}.db")
    pg = uri(db)
    for i, rd in enumerate(run_dirs):
        extra = ["--at", at[i]] if at else []
        a = fdx("fdx-ingest", *extra, lite, rd)
        b = fdx("fdx-ingest", *extra, pg, rd)
        check(a.returncode == 0 and b.returncode == 0, f"{name}: ingest {rd}",
              a.stderr + b.stderr)
        check(summary(a) == summary(b), f"{name}: {rd}: same counts reported",
              f"sqlite: {summary(a)}\npg: {summary(b)}")
    ea, eb = export(lite, os.path.join(T, name + "-lite")), export(pg, os.path.join(T, name + "-pg"))
    check(ea.returncode == 0 and eb.returncode == 0, f"{name}: export", ea.stderr + eb.stderr)
    if ea.returncode == 0 and eb.returncode == 0:
        check(read_dir(os.path.join(T, name + "-lite")) == read_dir(os.path.join(T, name + "-pg")),
              f"{name}: the exports are byte-identical")
    for kind in ("misses", "dispatches"):
        ka = fdx("fdx-export", "--kind", kind, lite, "-")
        kb = fdx("fdx-export", "--kind", kind, pg, "-")
        check(ka.returncode == 0 and ka.stdout == kb.stdout, f"{name}: --kind {kind} to stdout",
              ka.stderr + kb.stderr)
    return lite, pg, db


IMPL = {"backend": "Cuda", "op": "MatMul", "dtypes": ["F16", "F16"], "kernel_source": "k",
        "kernel_revision_hash": 18446744073709551615}
HW = {"compute_capability": [9, 0], "hardware_sku": "H100", "driver_version": "560"}


def write_run(d, misses, dispatches):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "misses.jsonl"), "w", encoding="utf-8") as f:
        for m in misses:
            f.write(json.dumps(dict(schema=2, **m), ensure_ascii=False) + "\n")
    with open(os.path.join(d, "dispatches.jsonl"), "w", encoding="utf-8") as f:
        for x in dispatches:
            f.write(json.dumps(dict(schema=2, **x), ensure_ascii=False) + "\n")
    return d


def edge_runs():
    """Candidates replaced, kept by an empty list and by none; counts that
    saturate; unicode and escape-needing keys (tabs, backslashes, newlines)."""
    big = 2 ** 63 - 10
    cand = lambda lat: [{"impl_id": IMPL, "latency_ns": lat}]
    keys = ["mm:ü:ß:日本", "tab\there", "back\\slash\\N", "new\nline", "cr\rret", "emoji😀"]
    r0 = write_run(os.path.join(T, "edge", "run_0"),
                   [dict(wanted=k, fallback=IMPL, count=big if i == 0 else 3, hw=HW)
                    for i, k in enumerate(keys)],
                   [dict(structure_key="sat", chosen=IMPL, candidates=cand(5), count=big, hw=HW),
                    dict(structure_key="keep", chosen=IMPL, candidates=cand(7), count=1, hw=HW),
                    dict(chosen=IMPL, candidates=[], count=2, hw={"hardware_sku": "cpu",
                                                                  "driver_version": "n/a"})])
    r1 = write_run(os.path.join(T, "edge", "run_1"),
                   [dict(wanted=keys[0], fallback=IMPL, count=100, hw=HW)],
                   [dict(structure_key="sat", chosen=IMPL, candidates=cand(9), count=big, hw=HW),
                    dict(structure_key="keep", chosen=IMPL, candidates=[], count=1, hw=HW),
                    dict(structure_key="keep", chosen=IMPL, count=1, hw=HW)])
    return [r0, r1]


def test_same_exports():
    for vec in ("basic", "nasty"):
        same_as_sqlite(vec, runs_of(os.path.join(DATA, vec, "input")))
    gen = os.path.join(T, "gen")
    subprocess.run([sys.executable, GEN, gen, "--runs", "4", "--lines", "3000", "--cells", "700",
                    "--seed", "7"], check=True)
    # capture days far enough apart that retention rolls January into a month
    lite, pg, db = same_as_sqlite("generated", runs_of(gen),
                                  at=["2026-01-05", "2026-01-20", "2026-06-20", "2026-06-21"])
    same_as_sqlite("edge", edge_runs())
    # a backfill: the second run captured before the first leaves the first's lists
    lite_b, pg_b, _ = same_as_sqlite("backfill", edge_runs(), at=["2026-12-01", "2026-11-01"])
    for store in (lite_b, pg_b):
        out = fdx("fdx-export", "--kind", "dispatches", store, "-").stdout
        sat = [ln for ln in out.splitlines() if '"structure_key":"sat"' in ln]
        check(len(sat) == 1 and '"latency_ns":5}' in sat[0],
              f"backfill: {store[:40]}: the later capture's list stays", out)
    return lite, pg, db



VIEWS = ("miss_cells", "dispatch_cells", "miss_demand", "miss_demand_by_device",
         "dispatch_candidates", "dispatch_regret", "miss_daily", "dispatch_daily",
         "miss_daily_by_store", "dispatch_daily_by_store", "fleet_ledger", "miss_growth_7d")
# Compared apart: the wall clock of each commit, and cell ids, which each kind
# of store allocates its own way (a PostgreSQL sequence skips the ids of
# upserts that updated); they must still be unique per store.
VOLATILE = {"fleet_ledger": ("committed_at",), "miss_cells": ("cell_id",),
            "dispatch_cells": ("cell_id",)}
# The same ids on every candidate of a cell: compared apart too, not unique.
CELL_IDS = {"dispatch_candidates": ("cell_id",)}


def view_rows(lite, db, view):
    """The rows of a view in both stores, typed: PostgreSQL's rows as JSON
    (a boolean is SQLite's 1 or 0, a numeric its integer or real)."""
    import sqlite3
    con = sqlite3.connect(lite)
    cur = con.execute(f"SELECT * FROM {view} LIMIT 0")
    cols = [c[0] for c in cur.description]
    order = ", ".join(str(i + 1) for i in range(len(cols)))
    a = [list(r) for r in con.execute(f"SELECT * FROM {view} ORDER BY {order}")]
    own_a = con.execute("SELECT id FROM store_identity").fetchone()[0]
    con.close()
    own_b = psql("SELECT id FROM store_identity", db).stdout.strip()
    r = psql(f"SELECT coalesce(json_agg(json_build_array({', '.join(cols)})), '[]') FROM "
             f"(SELECT * FROM {view} ORDER BY {order}) AS t", db)
    b = [[int(v) if isinstance(v, bool) else v for v in row] for row in json.loads(r.stdout)] \
        if r.returncode == 0 else []
    unique = [cols.index(c) for c in VOLATILE.get(view, ())]
    skip = unique + [cols.index(c) for c in CELL_IDS.get(view, ())]
    if view == "fleet_ledger":  # a merge is captured when it runs
        for row in a + b:
            if row[cols.index("kind")] == "merge":
                row[cols.index("day")] = row[cols.index("captured_at")] = None
    for i in unique:
        check(len({row[i] for row in a}) == len(a) and len({row[i] for row in b}) == len(b),
              f"views: {view}.{cols[i]} is unique in each store")
    # each store names itself by its own random id; the host stores' ids agree
    norm = lambda rows, own: sorted(json.dumps(
        [None if i in skip else "<this store>" if v == own else v for i, v in enumerate(row)],
        ensure_ascii=False) for row in rows)
    return cols, norm(a, own_a), norm(b, own_b) if r.returncode == 0 else r.stderr


def view_runs():
    """Misses and dispatches on GPUs and a CPU, candidates measured, unmeasured
    and beaten, revision hashes above and below 2^63."""
    cpu = {"hardware_sku": "cpu", "driver_version": "n/a"}
    ada = {"compute_capability": [8, 9], "hardware_sku": "L4", "driver_version": "550"}
    low = dict(IMPL, kernel_revision_hash=12345, backend="Triton", dtypes=["F32"])
    alt = dict(IMPL, kernel_source="k2", kernel_revision_hash=2 ** 63 + 7)
    joined, split = dict(IMPL, dtypes=["F16,F32"]), dict(IMPL, dtypes=["F16", "F32"])
    runs = []
    for i in range(4):
        cands = [{"impl_id": IMPL, "latency_ns": 900 + i}, {"impl_id": low, "latency_ns": 300 + i},
                 {"impl_id": alt}]
        runs.append(write_run(
            os.path.join(T, "views", f"run_{i}"),
            [dict(wanted="mm:a", fallback=IMPL, count=i + 1, hw=HW),
             dict(wanted="mm:a", fallback=low, count=2, hw=cpu),
             dict(wanted=f"mm:{'b' if i < 2 else 'c'}", fallback=low, count=5 * i + 1, hw=ada)],
            [dict(structure_key="s1", chosen=IMPL, candidates=cands, count=i + 1, hw=HW),
             dict(structure_key="s2", chosen=low, candidates=cands[1:], count=1, hw=ada),
             dict(chosen=low, candidates=[{"impl_id": low, "latency_ns": 50},
                                          {"impl_id": IMPL, "latency_ns": 40}], count=3, hw=cpu),
             dict(structure_key="s3", chosen=IMPL, count=2, hw=cpu),
             # a candidate measured at 0 ns: SQLite's speedup is NULL, PostgreSQL's
             # view failed every query with "division by zero"
             dict(structure_key="s4", chosen=IMPL, candidates=[
                 {"impl_id": IMPL, "latency_ns": 50}, {"impl_id": low, "latency_ns": 0}],
                 count=1, hw=ada),
             # two cells whose dtypes join to the same text: the regret views took
             # them for one, and the second's fast choice hid the first's regret
             dict(structure_key="s5", chosen=joined, candidates=[
                 {"impl_id": joined, "latency_ns": 100}, {"impl_id": low, "latency_ns": 50}],
                 count=1, hw=cpu),
             dict(structure_key="s5", chosen=split, candidates=[
                 {"impl_id": split, "latency_ns": 10}], count=1, hw=cpu)]))
    return runs


def test_views():
    """Every view of the SQLite store, in the PostgreSQL store that absorbed the
    same feeds and the same merges: the same columns and the same rows."""
    runs = view_runs()
    lite, pg, db = same_as_sqlite("views", runs[:3], at=["2026-03-01", "2026-03-06", "2026-03-12"])
    hosts = []
    for n, day in (("a", "2026-03-04"), ("b", "2026-03-11")):
        host = os.path.join(T, f"views-host-{n}.db")
        r = fdx("fdx-ingest", "--at", day, host, runs[3] if n == "a" else runs[0])
        check(r.returncode == 0, f"views: host {n} ingests", r.stderr)
        hosts.append(host)
    for target in (lite, pg):
        r = fdx("fdx-merge", target, *hosts)
        check(r.returncode == 0, f"views: merge into {target.split('?')[0][-20:]}", r.stderr)
    for view in VIEWS:
        cols, a, b = view_rows(lite, db, view)
        check(isinstance(b, list), f"views: PostgreSQL has {view}", b if isinstance(b, str) else "")
        check(len(a) > 0, f"views: {view} has rows to compare")
        check(a == b, f"views: {view} ({', '.join(cols)}) has the same rows in both",
              "\n".join(["sqlite:", *a[:8], "pg:", *(b[:8] if isinstance(b, list) else [])]))
        if view == "dispatch_regret":
            s5 = [r for r in a if json.loads(r)[0] == "s5"]
            check(len(s5) == 1 and json.loads(s5[0])[3] == "F16,F32",
                  "views: the regret of a cell whose dtypes join as another's", "\n".join(a))

def test_tools(lite, pg, db):
    for args in (["-n", "5"], ["--json"], ["--growth", "7d"], ["--growth", "30d"], ["--sql"],
                 ["--since", "2026-01-01", "--until", "2026-02-01"],
                 ["--since", "2026-06-21"], ["--op", "MatMul", "--cc", "8.9"]):
        a, b = fdx("fdx-top", *args, lite), fdx("fdx-top", *args, pg)
        check(a.returncode == b.returncode == 0 and a.stdout == b.stdout,
              f"fdx-top {' '.join(args)}: the same for both stores", a.stderr + b.stderr)
    # an ingest without observations moves no day forward, and a new daily
    # window rolls the history up the same way in both
    for args in ([], ["--daily-days", "20"]):
        a = fdx("fdx-ingest", *args, lite, "/dev/null")
        b = fdx("fdx-ingest", *args, pg, "/dev/null")
        check(a.returncode == b.returncode == 0, f"empty ingest {args}", a.stderr + b.stderr)
        for top in (["--growth", "7d"], ["--since", "2026-05-01", "--until", "2026-06-21"],
                    ["--since", "2026-06-01"]):
            a, b = fdx("fdx-top", *top, lite), fdx("fdx-top", *top, pg)
            check(a.returncode == b.returncode == 0 and a.stdout == b.stdout,
                  f"after an empty ingest {args}: fdx-top {' '.join(top)} agrees",
                  f"sqlite:\n{a.stdout}{a.stderr}\npg:\n{b.stdout}{b.stderr}")
    page = os.path.join(T, "report.html")
    r = fdx("fdx-report", pg, page)
    check(r.returncode == 0 and os.path.getsize(page) > 1000, "fdx-report of a PostgreSQL store",
          r.stderr)
    # diff, PostgreSQL on either side, against an SQLite store with one run less
    fewer = os.path.join(T, "fewer.db")
    for rd in runs_of(os.path.join(DATA, "nasty", "input"))[:-1]:
        fdx("fdx-ingest", fewer, rd)
    a = fdx("fdx-diff", fewer, lite)
    b = fdx("fdx-diff", fewer, pg)
    c = fdx("fdx-diff", pg, fewer)
    d = fdx("fdx-diff", lite, fewer)
    check(a.returncode == b.returncode == 0 and a.stdout == b.stdout and "0 cells changed"
          not in a.stderr, "fdx-diff SQLITE PG is fdx-diff SQLITE SQLITE", a.stderr + b.stderr)
    check(c.returncode == d.returncode == 0 and c.stdout == d.stdout,
          "fdx-diff PG SQLITE is fdx-diff SQLITE SQLITE", c.stderr + d.stderr)
    e = fdx("fdx-diff", pg, pg)
    check(e.returncode == 0 and "0 cells changed" in e.stderr, "fdx-diff PG PG", e.stderr)
    # merge from PostgreSQL into SQLite (into PostgreSQL: pg_merge_test.py);
    # a dry-run prune of PostgreSQL changes nothing (pg_prune_test.py prunes)
    m = os.path.join(T, "merged.db")
    r = fdx("fdx-merge", m, pg)
    ea, eb = export(m, os.path.join(T, "m1")), export(lite, os.path.join(T, "m2"))
    check(r.returncode == 0 and read_dir(os.path.join(T, "m1")) == read_dir(os.path.join(T, "m2")),
          "fdx-merge SQLITE PG brings every cell", r.stderr)
    before = fdx("fdx-export", "--kind", "misses", pg, "-").stdout
    r = fdx("fdx-prune", "--dry-run", "--op", "MatMul", pg)
    check(r.returncode == 0 and "would remove" in r.stderr, "fdx-prune --dry-run of PG counts",
          r.stderr)
    check(fdx("fdx-export", "--kind", "misses", pg, "-").stdout == before,
          "the dry run left the store as it was")
    r = fdx("fdx-ingest", "postgres://" + uri(db)[len("postgresql://"):],
            os.path.join(DATA, "basic", "input", "run_0000"))
    check(r.returncode == 0, "a postgres:// URI is a PostgreSQL store too", r.stderr)


def totals(store):
    return pglib.totals(fdx, store)


def test_one_handle():
    """A runtime embedding the library drives one handle through many write
    transactions (sink drains, records, prunes). A PostgreSQL handle pushed
    every cell its working copy held at each commit, those of the
    transactions it had already pushed too: three drains of one observation
    each left a count of 6. Both kinds of store must report the same counts
    at every commit and end with the same cells. Reading the cells through a
    PostgreSQL writer's handle read its working copy, which holds only what
    the handle wrote; it is refused."""
    program = os.environ["FDX_ONE_HANDLE"]
    lite, pg = os.path.join(T, "one-handle.db"), uri(new_db())
    runs = [subprocess.run([program, store], capture_output=True, text=True, timeout=LIMIT)
            for store in (lite, pg)]
    for store, r in zip(("sqlite", "pg"), runs):
        check(r.returncode == 0, f"one handle, {store}: every transaction commits", r.stderr)
    check("2 miss cells" in runs[0].stderr, "one handle: an SQLite writer reads its store",
          runs[0].stderr)
    check("read the store through a read-only handle" in runs[1].stderr,
          "one handle: a PostgreSQL writer refuses to read what it does not hold", runs[1].stderr)
    check(runs[0].stdout == runs[1].stdout, "one handle: the same counts at every commit",
          f"sqlite:\n{runs[0].stdout}pg:\n{runs[1].stdout}")
    ea, eb = export(lite, os.path.join(T, "oh-lite")), export(pg, os.path.join(T, "oh-pg"))
    check(ea.returncode == 0 and eb.returncode == 0, "one handle: export", ea.stderr + eb.stderr)
    misses = open(os.path.join(T, "oh-pg", "misses.jsonl")).read() if eb.returncode == 0 else ""
    check(read_dir(os.path.join(T, "oh-lite")) == read_dir(os.path.join(T, "oh-pg")),
          "one handle: the exports are byte-identical", misses)
    counts = {json.loads(l)["wanted"]: json.loads(l)["count"] for l in misses.splitlines()}
    check(counts == {"txn:sink": 9, "txn:direct": 12}, "one handle: each observation once",
          str(counts))


def test_run_id():
    db = new_db()
    pg = uri(db)
    rd = os.path.join(DATA, "basic", "input", "run_0000")
    a = fdx("fdx-ingest", "--run-id", "r-1", pg, rd)
    first = totals(pg)
    b = fdx("fdx-ingest", "--run-id", "r-1", pg, rd)
    check(a.returncode == 0 and b.returncode == 0 and "nothing to do" in b.stderr,
          "a repeated --run-id is a no-op", a.stderr + b.stderr)
    check(totals(pg) == first, "a repeated --run-id adds nothing")
    c = fdx("fdx-ingest", "--run-id", "r-1", pg, os.path.join(DATA, "basic", "input", "run_0001"))
    check(c.returncode == 1 and "different content" in c.stderr,
          "a --run-id with other content is refused", c.stderr)
    # concurrent duplicates: every process but one finds the run id taken
    db = new_db()
    pg = uri(db)
    fdx("fdx-ingest", pg, "/dev/null")
    procs = [subprocess.Popen([tool("fdx-ingest"), "--run-id", "same", pg, rd],
                              stderr=subprocess.PIPE, text=True) for _ in range(6)]
    errs = [p.communicate(timeout=LIMIT)[1] for p in procs]
    check(all(p.returncode == 0 for p in procs), "concurrent duplicates all succeed",
          "\n".join(errs))
    check(sum("cells added" in e for e in errs) == 1 and
          sum("nothing to do" in e for e in errs) == 5, "exactly one duplicate ingested",
          "\n".join(errs))
    check(totals(pg) == first, "concurrent duplicates count once")


def test_concurrent():
    db = new_db()  # no tables yet: the writers race to create them
    pg = uri(db)
    feeds = os.path.join(T, "conc")
    subprocess.run([sys.executable, GEN, feeds, "--runs", "8", "--lines", "1500", "--cells",
                    "300", "--seed", "3"], check=True)
    rds = runs_of(feeds)
    procs = [subprocess.Popen([tool("fdx-ingest"), "--run-id", f"c{i}", pg, rd],
                              stderr=subprocess.PIPE, text=True) for i, rd in enumerate(rds)]
    errs = [p.communicate(timeout=LIMIT)[1] for p in procs]
    check(all(p.returncode == 0 for p in procs), "8 concurrent ingests succeed", "\n".join(errs))
    lite = os.path.join(T, "conc.db")
    for rd in rds:
        fdx("fdx-ingest", lite, rd)
    check(totals(pg) == totals(lite), "8 concurrent ingests give exact totals")
    return rds, lite


def test_killed(rds, lite):
    rng = random.Random(11)
    want = totals(lite)
    for attempt in range(6):
        db = new_db()
        pg = uri(db)
        fdx("fdx-ingest", pg, "/dev/null")
        for i, rd in enumerate(rds):
            p = subprocess.Popen([tool("fdx-ingest"), "--run-id", f"k{i}", pg, rd],
                                 stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, 0.15))
            p.send_signal(signal.SIGKILL)
            p.wait()
        mid = fdx("fdx-export", "--kind", "misses", pg, "-")
        check(mid.returncode == 0, f"kill round {attempt}: the store reads after the kills",
              mid.stderr)
        for i, rd in enumerate(rds):
            r = fdx("fdx-ingest", "--run-id", f"k{i}", pg, rd)
            check(r.returncode == 0, f"kill round {attempt}: rerun {i}", r.stderr)
        check(totals(pg) == want, f"kill round {attempt}: every run counted exactly once")


def test_restart(rds, lite):
    db = new_db()
    pg = uri(db)
    fdx("fdx-ingest", pg, "/dev/null")
    stop = threading.Event()
    failures = []

    def writer():
        for i, rd in enumerate(rds):
            r = fdx("fdx-ingest", "--run-id", f"s{i}", pg, rd)
            if r.returncode != 0:
                failures.append(r.stderr)
        stop.set()

    t = threading.Thread(target=writer)
    t.start()
    time.sleep(0.3)
    r = subprocess.run(["bash", CLUSTER, "restart", STATE], capture_output=True, text=True)
    check(r.returncode == 0, "the server restarts", r.stderr)
    t.join(LIMIT)
    for msg in failures:
        check("postgresql" in msg or "PostgreSQL" in msg or "connect" in msg,
              "an ingest cut by the restart says why", msg)
    for i, rd in enumerate(rds):
        r = fdx("fdx-ingest", "--run-id", f"s{i}", pg, rd)
        check(r.returncode == 0, f"after the restart, run {i} completes", r.stderr)
    check(totals(pg) == totals(lite), "a restart mid-run loses nothing and counts nothing twice")


def test_password():
    db = new_db()
    secret = uri(db, password=SECRET)
    rd = os.path.join(DATA, "basic", "input", "run_0000")
    outs = []
    for args in (["fdx-ingest", "--progress", secret, rd],
                 ["fdx-ingest", "--run-id", "p", secret, rd],
                 ["fdx-ingest", "--run-id", "p", secret, rd],
                 ["fdx-export", "--progress", secret, os.path.join(T, "pw")],
                 ["fdx-top", "--sql", secret], ["fdx-top", secret],
                 ["fdx-report", secret, os.path.join(T, "pw.html")],
                 ["fdx-diff", secret, secret], ["fdx-merge", secret, secret],
                 ["fdx-prune", "--op", "x", secret],
                 ["fdx-export", secret.replace(db, "no_such_db"), os.path.join(T, "pw2")],
                 ["fdx-ingest", secret + "&sslmode=bogus", rd],
                 ["fdx-ingest", re.sub(r"port=\d+", "port=1", secret), rd],
                 ["fdx-export", uri(db) + "&password=" + SECRET, os.path.join(T, "pw3")],
                 ["fdx-ingest", secret, os.path.join(T, "missing.jsonl")],
                 ["fdx-ingest", secret.replace(SECRET, SECRET + "%zz"), rd],
                 ["fdx-ingest", secret.replace(SECRET, SECRET + "%41"), rd],
                 ["fdx-export", uri(db) + "&password=" + SECRET + "%zz", os.path.join(T, "pw4")],
                 # libpq reads only "password": a key misspelt in case is
                 # refused as unknown, and named in the message
                 ["fdx-export", uri(db) + "&PASSWORD=" + SECRET, os.path.join(T, "pw5")],
                 ["fdx-export", uri(db) + "&Password=" + SECRET, os.path.join(T, "pw6")]):
        r = fdx(*args)
        outs.append((args, r))
    bad = os.path.join(T, "bad.jsonl")
    with open(bad, "w") as f:
        f.write("{not json\n")
    outs.append((["fdx-ingest"], fdx("fdx-ingest", secret, bad)))
    target = os.path.join(T, "pw-merged.db")
    for _ in range(2):  # the second time: already merged, said with the source's name
        outs.append((["fdx-merge"], fdx("fdx-merge", target, secret)))
    check(outs[-1][1].returncode == 0 and "already merged" in outs[-1][1].stderr,
          "merging a PostgreSQL store again is a no-op", outs[-1][1].stderr)
    check(SECRET.encode() not in open(target, "rb").read(),
          "a store merged from a URI does not keep its password")
    for args, r in outs:
        check(SECRET not in r.stdout + r.stderr, f"{args[0]} never shows the password",
              r.stdout + r.stderr)
    failed = [r for a, r in outs if r.returncode != 0 and "postgresql://" in r.stderr]
    check(len(failed) >= 5 and all("***" in r.stderr for r in failed),
          "failures name the store with the password hidden",
          "\n".join(r.stderr for r in failed))
    html = open(os.path.join(T, "pw.html"), encoding="utf-8").read()
    check(SECRET not in html, "the report page never shows the password")
    # a password libpq reads only part of (an unencoded '@' or '&' in it):
    # neither part shows, in the URI shown or in libpq's message naming it
    head, tail = SECRET[:6], SECRET[6:]
    for case, bad in (("'@' in the userinfo", f"postgresql://u:{head}@{tail}@localhost:1/{db}"),
                      ("'&' in the query", uri(db) + f"&password={head}&{tail}")):
        r = fdx("fdx-top", bad)
        check(r.returncode == 1 and head not in r.stderr and tail not in r.stderr,
              f"a password with {case} never shows", r.stderr)
    # a short password hides itself, not every place its letters occur in
    r = fdx("fdx-top", uri(db, user="nobody_here", password="p"))
    check(r.returncode == 1 and 'socket "/' in r.stderr and "fdx-***g" not in r.stderr,
          "a one-letter password leaves the message readable", r.stderr)


def crafted(name, sql, expect):
    db = new_db()
    pg = uri(db)
    fdx("fdx-ingest", pg, os.path.join(DATA, "basic", "input", "run_0000"))
    r = psql(sql, db)
    check(r.returncode == 0, f"{name}: altering the store", r.stderr)
    for args in (["fdx-export", pg, os.path.join(T, "crafted")], ["fdx-top", pg],
                 ["fdx-ingest", pg, os.path.join(DATA, "basic", "input", "run_0001")]):
        r = fdx(*args)
        check(r.returncode == 1 and expect in r.stderr and "Traceback" not in r.stderr,
              f"{name}: {args[0]} refuses it (exit 1, naming {expect!r})",
              f"exit {r.returncode}\n{r.stderr}")


def test_crafted():
    drop = ("DROP VIEW miss_cells, dispatch_cells, miss_demand, miss_demand_by_device, "
            "dispatch_candidates, miss_growth_7d CASCADE; ")
    # layout 2 had six of the views: such a store is refused, not half-used
    crafted("previous layout", "UPDATE fdx_meta SET schema_version = 2", "layout version 2")
    crafted("column type", drop + "ALTER TABLE miss_cell ALTER COLUMN count TYPE numeric",
            "miss_cell.count")
    crafted("trigger", "CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS "
            "'BEGIN RETURN NEW; END'; CREATE TRIGGER sneaky BEFORE INSERT ON dispatch_cell "
            "FOR EACH ROW EXECUTE FUNCTION f()", "sneaky")
    crafted("view", "ALTER TABLE cell_history RENAME TO h2; CREATE VIEW cell_history AS "
            "SELECT * FROM h2", "cell_history")
    crafted("missing table", "DROP TABLE prune_log", "prune_log")
    # a child's rows are read, but no upsert's conflict sees them
    crafted("inherited", "CREATE TABLE evil () INHERITS (miss_cell)", "inherited")
    crafted("view replaced", "DROP VIEW miss_demand; CREATE TABLE miss_demand AS SELECT "
            "'FORGED'::text AS wanted, 999::bigint AS misses", "miss_demand")
    crafted("collation", drop + "ALTER TABLE miss_cell ALTER COLUMN wanted TYPE text COLLATE \"POSIX\"",
            "miss_cell.wanted")
    # one named C in another schema (here case-blind) passed for pg_catalog's
    crafted("collation named C", drop + "CREATE COLLATION public.\"C\" (provider = icu, locale = "
            "'und-u-ks-level2', deterministic = false); ALTER TABLE miss_cell ALTER COLUMN op "
            "TYPE text COLLATE public.\"C\"", "miss_cell.op")
    # keys, uniques, checks and foreign keys: an upsert's conflict needs the keys, and
    # the checks keep writers from adding onto forged counts
    crafted("dropped key", "ALTER TABLE dispatch_cell DROP CONSTRAINT dispatch_cell_pkey",
            "dispatch_cell lacks its PRIMARY KEY (keyed,structure_key,")
    crafted("dropped unique", "ALTER TABLE miss_cell DROP CONSTRAINT miss_cell_cell_id_key",
            "miss_cell lacks its UNIQUE (cell_id)")
    crafted("dropped check", "ALTER TABLE cell_history DROP CONSTRAINT cell_history_count_check",
            "cell_history lacks its CHECK on (count)")
    crafted("check not valid", "ALTER TABLE miss_cell DROP CONSTRAINT miss_cell_count_check; "
            "ALTER TABLE miss_cell ADD CONSTRAINT miss_cell_count_check CHECK (count >= -5) "
            "NOT VALID", "miss_cell_count_check of miss_cell is NOT VALID")
    crafted("deferrable key", "ALTER TABLE history_origin DROP CONSTRAINT history_origin_pkey "
            "CASCADE; ALTER TABLE history_origin ADD PRIMARY KEY (id) DEFERRABLE",
            "of history_origin is deferrable")
    crafted("extra constraint", "ALTER TABLE miss_cell ADD CONSTRAINT sneaky_check "
            "CHECK (length(op) < 1000)", "sneaky_check fdx does not make")
    crafted("foreign key elsewhere", "ALTER TABLE prune_log DROP CONSTRAINT "
            "prune_log_ledger_id_fkey; CREATE TABLE other (id bigint PRIMARY KEY); "
            "ALTER TABLE prune_log ADD FOREIGN KEY (ledger_id) REFERENCES other (id) "
            "ON DELETE CASCADE", "does not refer to ingest_ledger")
    # a newer fdx's layout is named as such, though its tables are not this build's
    crafted("newer layout", "ALTER TABLE miss_cell ADD COLUMN future text; "
            "UPDATE fdx_meta SET schema_version = 4", "written by a newer fdx")
    # rows fdx would not write: refused by the same checks as an SQLite store's
    db = new_db()
    pg = uri(db)
    fdx("fdx-ingest", pg, os.path.join(DATA, "basic", "input", "run_0000"))
    psql("UPDATE dispatch_cell SET candidates = '[{\"forged\": 1}]' WHERE keyed = 1", db)
    r = fdx("fdx-export", pg, os.path.join(T, "forged"))
    check(r.returncode == 1 and "dispatch_cell" in r.stderr and "candidates" in r.stderr,
          "forged candidates are refused by fdx-export", r.stderr)
    r = fdx("fdx-report", pg, os.path.join(T, "forged.html"))
    check(r.returncode == 1, "forged candidates are refused by fdx-report", r.stderr)
    db = new_db()
    pg = uri(db)
    fdx("fdx-ingest", pg, os.path.join(DATA, "basic", "input", "run_0000"))
    psql("UPDATE miss_cell SET dtypes = 'not json'", db)
    r = fdx("fdx-export", pg, os.path.join(T, "forged2"))
    check(r.returncode == 1 and "miss_cell" in r.stderr, "forged dtypes are refused", r.stderr)
    r = fdx("fdx-export", uri(new_db()), os.path.join(T, "empty"))
    check(r.returncode == 1 and "not an fdx store" in r.stderr,
          "a database without fdx tables is not a store for a reader", r.stderr)
    # history settings no fdx store holds, set after the store was opened:
    # every writer checks them as it locks them (merges and prunes wrote on)
    lite = os.path.join(T, "settings-src.db")
    fdx("fdx-ingest", lite, os.path.join(DATA, "basic", "input", "run_0001"))
    for what, args in (("fdx-merge", ["fdx-merge", "{pg}", lite]),
                       ("fdx-prune", ["fdx-prune", "--op", "MatMul", "{pg}"]),
                       ("fdx-ingest", ["fdx-ingest", "{pg}",
                                       os.path.join(DATA, "basic", "input", "run_0001")])):
        db = new_db()
        pg = uri(db)
        fdx("fdx-ingest", pg, os.path.join(DATA, "basic", "input", "run_0000"))
        before = totals(pg)

        def forge(proxy, data, server, db=db):
            psql("UPDATE history_config SET latest_day = 9223372036854775807", db)
        proxy = Proxy(db, b"FOR UPDATE", forge)
        try:
            r = fdx(*[a.replace("{pg}", proxy.uri()) for a in args])
        finally:
            proxy.close()
        check(r.returncode == 1 and "history_config.latest_day" in r.stderr,
              f"{what} refuses history settings forged under it", r.stderr)
        psql("UPDATE history_config SET latest_day = NULL", db)
        check(totals(pg) == before, f"the refused {what} left the cells as they were")


def test_bad_uris():
    rd = os.path.join(DATA, "basic", "input", "run_0000")
    cases = [("wrong port", re.sub(r"port=\d+", "port=1", uri("postgres"))),
             ("no such socket directory", "postgresql:///x?host=/nonexistent-fdx-dir"),
             ("unreachable host", "postgresql://10.255.255.1:5432/x?connect_timeout=2"),
             ("no such database", uri("fdx_no_such_db")),
             ("malformed", "postgresql://[::1/x")]
    for name, u in cases:
        for args in (["fdx-ingest", u, rd], ["fdx-export", u, os.path.join(T, "bad")]):
            r = fdx(*args)
            check(r.returncode == 1 and r.stderr.strip() and "Traceback" not in r.stderr,
                  f"{name}: {args[0]} fails with exit 1 and a message",
                  f"exit {r.returncode}\n{r.stderr}")


ROLES = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs",
                          "fleet_roles.sql"), encoding="utf-8").read()


def test_roles():
    db = new_db()
    admin = uri(db)
    r = fdx("fdx-ingest", admin, "/dev/null")
    check(r.returncode == 0, "the owner creates the store", r.stderr)
    psql("DROP ROLE IF EXISTS fdx_writer; DROP ROLE IF EXISTS fdx_reader", db)
    r = psql(ROLES, db)
    check(r.returncode == 0, "docs/fleet_roles.sql runs", r.stderr)
    writer, reader = uri(db, "fdx_writer"), uri(db, "fdx_reader")
    rds = runs_of(os.path.join(DATA, "basic", "input"))
    for rd in rds:
        r = fdx("fdx-ingest", "--run-id", rd, writer, rd)
        check(r.returncode == 0, "fdx_writer ingests", r.stderr)
    r = fdx("fdx-ingest", "--run-id", rds[0], writer, rds[0])
    check(r.returncode == 0 and "nothing to do" in r.stderr, "fdx_writer's run ids hold",
          r.stderr)
    r = fdx("fdx-export", reader, os.path.join(T, "reader"))
    check(r.returncode == 0, "fdx_reader exports", r.stderr)
    # It reads every fdx table: it lacked the prune tombstones', which every reader reads.
    r = fdx("fdx-export", writer, os.path.join(T, "writer"))
    check(r.returncode == 0, "fdx_writer exports", r.stderr)
    r = fdx("fdx-ingest", reader, rds[0])
    check(r.returncode == 1 and "permission denied" in r.stderr, "fdx_reader cannot ingest",
          r.stderr)
    for sql in ("DELETE FROM miss_cell", "DROP TABLE miss_cell", "CREATE TABLE x (a int)",
                "TRUNCATE ingest_ledger", "DELETE FROM ingest_ledger",
                "ALTER TABLE miss_cell ADD COLUMN y int",
                "CREATE TRIGGER t BEFORE INSERT ON miss_cell FOR EACH ROW "
                "EXECUTE FUNCTION suppress_redundant_updates_trigger()"):
        r = psql(sql, db, "fdx_writer")
        check(r.returncode != 0 and ("must be owner" in r.stderr or "permission denied" in r.stderr),
              f"fdx_writer cannot: {sql}", r.stderr)
        r = psql(sql, db, "fdx_reader")
        check(r.returncode != 0, f"fdx_reader cannot: {sql}", r.stderr)
    for view in VIEWS:
        r = psql(f"SELECT count(*) FROM {view}", db, "fdx_reader")
        check(r.returncode == 0 and r.stdout.strip().isdigit(), f"fdx_reader queries {view}",
              r.stderr)


def ingest_into_new_db(rd, env):
    """Ingests rd into a new database with env: the database, the run, and
    the ledger rows PostgreSQL holds after it."""
    db = new_db()
    r = fdx("fdx-ingest", uri(db), rd, env=env)
    q = psql("SELECT count(*) FROM ingest_ledger", db)
    return db, r, int(q.stdout.strip()) if q.returncode == 0 else 0


def test_full_tmpdir():
    """A PostgreSQL store's working copy lives under $TMPDIR: when that fills,
    the command either fails and PostgreSQL holds nothing of it, or succeeds
    and holds it all, at every amount of room left."""
    fs = os.path.join(T, "small")
    os.makedirs(fs)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", fs],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(f"pg: SKIP a full TMPDIR: cannot mount a tmpfs ({p.stderr.strip()})",
              file=sys.stderr)
        return
    rd = os.path.join(DATA, "basic", "input", "run_0000")
    outcomes = set()
    try:
        for free_kib in range(64, 1024, 32):
            for name in os.listdir(fs):
                os.unlink(os.path.join(fs, name))
            st = os.statvfs(fs)
            with open(os.path.join(fs, "fill"), "wb") as f:
                f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - free_kib * 1024))
            _, r, rows = ingest_into_new_db(rd, dict(os.environ, TMPDIR=fs))
            outcomes.add(r.returncode)
            check(rows == (1 if r.returncode == 0 else 0),
                  f"with {free_kib} KiB left in TMPDIR the ingest exited {r.returncode} and "
                  f"PostgreSQL holds {rows} ledger rows", r.stderr)
    finally:
        subprocess.run(["umount", "-l", fs])
    check(outcomes == {0, 1}, f"a full TMPDIR failed some ingests and not others ({outcomes})")


def test_full_at_each_write():
    """$TMPDIR full from each write of an ingest's working copy on (the fault
    shim fails that write and every later one under it): the ingest fails
    with PostgreSQL untouched, or succeeds with its ledger row there and says
    what it added; past the push, it succeeds with the notice that the
    working copy could not follow, and the summary, also when the feed
    changed no cell. The store takes the next ingest."""
    shim = os.environ.get("FDX_FAULT_SHIM")
    check(bool(shim) and os.path.exists(shim), "FDX_FAULT_SHIM names the fault shim", shim)
    if not shim or not os.path.exists(shim):
        return
    empty = os.path.join(T, "full-at-empty")
    os.makedirs(empty)
    for name in ("misses.jsonl", "dispatches.jsonl"):
        open(os.path.join(empty, name), "w").close()
    for rd in (os.path.join(DATA, "basic", "input", "run_0000"), empty):
        full_at_each_write(shim, rd)


def full_at_each_write(shim, rd):
    full = os.path.join(T, "full-at")
    shutil.rmtree(full, ignore_errors=True)
    os.makedirs(full)
    log = os.path.join(T, "full-at.log")
    env = dict(os.environ, LD_PRELOAD=shim, TMPDIR=full, FDX_FULL_UNDER=full,
               FDX_SYNC_LOG=log, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") +
               ":verify_asan_link_order=0")

    def ingest_at(at):
        for name in os.listdir(full):
            os.unlink(os.path.join(full, name))
        if os.path.exists(log):
            os.remove(log)
        db, r, rows = ingest_into_new_db(rd, dict(env, FDX_FULL_AT=str(at)))
        writes = [int(line.split()[1]) for line in open(log) if line.startswith("writes ")]
        return db, r, rows, writes[-1] if writes else 0

    _, r, rows, total = ingest_at(0)
    check(r.returncode == 0 and rows == 1 and total > 10,
          f"an ingest of {rd} writes its working copy under $TMPDIR ({total} writes)", r.stderr)
    seen = {"failed": 0, "behind": 0}
    behind_db = None
    for at in range(1, total + 1):
        db, r, rows, _ = ingest_at(at)
        what = f"{rd}: $TMPDIR full from write {at} of {total}"
        check(rows == (1 if r.returncode == 0 else 0),
              f"{what}: exit {r.returncode}, {rows} ledger rows in PostgreSQL", r.stderr)
        if r.returncode != 0:
            seen["failed"] += 1
            continue
        check("cells added" in r.stderr, f"{what}: the summary says what the ingest added",
              r.stderr)
        if "could not follow" in r.stderr:
            seen["behind"] += 1
            behind_db = db
    check(seen["failed"] > 0 and seen["behind"] > 0,
          f"some ingests failed and some left the working copy behind ({seen})")
    if behind_db:
        again = fdx("fdx-ingest", uri(behind_db), rd)
        q = psql("SELECT count(*) FROM ingest_ledger", behind_db)
        check(again.returncode == 0 and q.stdout.strip() == "2",
              "a store whose working copy fell behind takes the next ingest",
              again.stderr + q.stdout)


COMMIT_SQL = b"-- Commits the PostgreSQL transaction.\nCOMMIT;"


class Proxy:
    """A Unix-socket proxy to the server that, the first time a client sends
    `marker` (once it has sent `after`), runs `act` before forwarding it."""

    def __init__(self, db, marker, act, after=b""):
        m = re.search(r"host=([^&]+)&port=(\d+)", uri(db))
        self.real, self.port, self.db = m.group(1), m.group(2), db
        self.marker, self.act, self.after, self.acted = marker, act, after, False
        self.dir = tempfile.mkdtemp(dir=T)
        self.srv = socket.socket(socket.AF_UNIX)
        self.srv.bind(os.path.join(self.dir, f".s.PGSQL.{self.port}"))
        self.srv.listen(16)
        self.stalled = []
        threading.Thread(target=self.serve, daemon=True).start()

    def uri(self):
        return uri(self.db).replace(f"host={self.real}", f"host={self.dir}")

    def serve(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            u = socket.socket(socket.AF_UNIX)
            u.connect(os.path.join(self.real, f".s.PGSQL.{self.port}"))
            state = {"after": not self.after}
            threading.Thread(target=self.pump, args=(c, u, state), daemon=True).start()
            threading.Thread(target=self.pump, args=(u, c, None), daemon=True).start()

    def backend(self):
        r = psql("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND "
                 "application_name = 'fdx' AND state LIKE 'idle in transaction%'", db=self.db)
        return [int(x) for x in r.stdout.split()]

    def pump(self, a, b, state):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                if state is not None and self.after and self.after in data:
                    state["after"] = True
                if state is not None and state["after"] and self.marker in data and \
                        not self.acted:
                    self.acted = True
                    if self.act(self, data, b) == "cut":
                        break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.srv.close()


def stall_commit(stall):
    """An act of Proxy: stops the session's backend (a commit stalled, as on a
    slow WAL flush), forwards the COMMIT, cuts the client off, and resumes
    the backend `stall` seconds later."""
    stalled = []

    def act(proxy, data, server):
        stalled.extend(proxy.backend())
        for pid in stalled:
            os.kill(pid, signal.SIGSTOP)
        server.sendall(data)
        threading.Timer(stall, lambda: [os.kill(pid, signal.SIGCONT) for pid in stalled]).start()
        return "cut"
    return act, stalled


def seeded():
    """A new database holding one ingest of run_0000: (its name, the run)."""
    db = new_db()
    rd = os.path.join(DATA, "basic", "input", "run_0000")
    r = fdx("fdx-ingest", uri(db), rd)
    check(r.returncode == 0, "the first ingest", r.stderr)
    return db, rd


def test_commit_lost_while_committing():
    """The connection lost during a COMMIT the server was still carrying out
    (its status 'in progress' when asked): the ingest waits for it to end
    instead of taking it for one that failed, pushing the run again and
    counting it twice."""
    db, rd = seeded()
    once = totals(uri(db))
    act, stalled = stall_commit(2.0)
    proxy = Proxy(db, COMMIT_SQL, act, after=b"INSERT INTO ingest_ledger")
    try:
        r = fdx("fdx-ingest", proxy.uri(), rd)
    finally:
        proxy.close()
    check(len(stalled) == 1, "the proxy stalled the push's COMMIT", str(stalled))
    check(r.returncode == 0, "the ingest whose COMMIT was stalled and cut off", r.stderr)
    twice = totals(uri(db))
    check(once and twice == {k: 2 * v for k, v in once.items()},
          "the stalled ingest counted once", f"{sum(once.values())} then {sum(twice.values())}")
    rows = psql("SELECT count(*) FROM ingest_ledger", db=db).stdout.strip()
    check(rows == "2", "one ledger row for each ingest", rows)


def test_outcome_unknown():
    """The connection lost during COMMIT, and the question of its outcome cut
    off too: the push ran again (exit 0) and counted the run twice. The
    ingest now exits 1 saying the outcome is unknown, and how to settle it."""
    db, rd = seeded()
    once = totals(uri(db))

    def cut_status(proxy, data, server):
        return "cut"

    def commit_then_cut(proxy, data, server):
        server.sendall(data)
        proxy.marker, proxy.act, proxy.after, proxy.acted = b"txid_status", cut_status, b"", False
        return "cut"
    proxy = Proxy(db, COMMIT_SQL, commit_then_cut, after=b"INSERT INTO ingest_ledger")
    try:
        r = fdx("fdx-ingest", proxy.uri(), rd)
    finally:
        proxy.close()
    check(r.returncode == 1 and "is unknown" in r.stderr and "ingest_ledger" in r.stderr,
          "a lost COMMIT whose outcome cannot be learnt is said to be unknown", r.stderr)
    rows = psql("SELECT count(*) FROM ingest_ledger", db=db).stdout.strip()
    after = totals(uri(db))
    check(rows in ("1", "2") and after in (once, {k: 2 * v for k, v in once.items()}),
          "the push was not run again after its outcome was lost", f"{rows} ledger rows")


def test_run_id_taken_during_a_push():
    """A run id another writer commits with other content while this push
    runs is refused as such, and not also as "0 bad lines"."""
    db = new_db()

    def take(proxy, data, server):
        r = fdx("fdx-ingest", "--run-id", "R", uri(db), os.path.join(DATA, "basic", "input",
                                                                      "run_0001"))
        check(r.returncode == 0, "the other writer took the run id", r.stderr)
    proxy = Proxy(db, b"INSERT INTO ingest_ledger", take)
    try:
        r = fdx("fdx-ingest", "--run-id", "R", proxy.uri(),
                os.path.join(DATA, "basic", "input", "run_0000"))
    finally:
        proxy.close()
    check(r.returncode == 1 and "different content" in r.stderr and "bad line" not in r.stderr,
          "a run id taken with other content is refused, naming only that", r.stderr)


def test_server_notices_not_printed():
    """The server's notices went to stderr as libpq printed them, without the
    program's name and through -q (a WARNING as the server shut down)."""
    db = new_db()
    psql(f"ALTER DATABASE {db} SET client_min_messages = 'debug5'", db=db)
    rd = os.path.join(DATA, "basic", "input", "run_0000")
    for args in (["fdx-ingest", "-q", uri(db), rd], ["fdx-top", uri(db)]):
        r = fdx(*args)
        check(r.returncode == 0 and "DEBUG:" not in r.stderr,
              f"{args[0]} does not print the server's notices", r.stderr[:500])


def holding(db, lock, seconds):
    """psql holding what the statement lock takes in database db, for seconds."""
    host, port = re.search(r"host=([^&]+)&port=(\d+)", uri(db)).groups()
    return subprocess.Popen(
        ["psql", "-h", host, "-p", port, "-U", "postgres", "-d", db, "-qAt", "-c",
         f"BEGIN; {lock}; SELECT pg_sleep({seconds}); COMMIT;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_busy_timeout():
    """A writer waiting for another's turn waits up to --busy-timeout, as with
    SQLite, then fails saying so: it waited for as long as the other held the
    store (a stalled writer stalled every other for ever)."""
    db, rd = seeded()
    before = totals(uri(db))
    holder = holding(db, "SELECT 1 FROM history_config FOR UPDATE", 6)
    try:
        time.sleep(1)
        for ms in ("500", "0"):
            t0 = time.monotonic()
            r = fdx("fdx-ingest", "--busy-timeout", ms, uri(db), rd)
            took = time.monotonic() - t0
            check(r.returncode == 1 and "busy timeout" in r.stderr and took < 4,
                  f"--busy-timeout {ms} fails once it has waited that long",
                  f"exit {r.returncode} after {took:.1f} s\n{r.stderr}")
    finally:
        holder.wait()
    check(totals(uri(db)) == before, "the writers that gave up changed nothing")


def test_signals_leave_no_working_copy():
    """A tool ended by SIGTERM, SIGINT or SIGHUP (cron's timeout, Ctrl-C, a
    closed terminal) left its working copy under $TMPDIR: only its close
    removed it. Each ends with its signal, and leaves nothing there."""
    db, rd = seeded()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        tmp = tempfile.mkdtemp(dir=T)
        # a reader's copy of the cells waits for this lock, its working copy made
        holder = holding(db, "LOCK TABLE miss_cell IN ACCESS EXCLUSIVE MODE", 8)
        try:
            deadline = time.monotonic() + 5
            while psql("SELECT count(*) FROM pg_locks WHERE relation = 'miss_cell'::regclass "
                       "AND mode = 'AccessExclusiveLock' AND granted", db).stdout.strip() != "1" \
                    and time.monotonic() < deadline:
                time.sleep(0.05)
            p = subprocess.Popen([tool("fdx-export"), uri(db), os.path.join(tmp, "out")],
                                 stderr=subprocess.DEVNULL, env=dict(os.environ, TMPDIR=tmp))
            deadline = time.monotonic() + 5
            while not any(n.startswith("fdx-pg-") for n in os.listdir(tmp)) and \
                    time.monotonic() < deadline:
                time.sleep(0.01)
            made = any(n.startswith("fdx-pg-") for n in os.listdir(tmp))
            time.sleep(0.2)
            p.send_signal(sig)
            code = p.wait(timeout=LIMIT)
        finally:
            holder.wait()
        check(made, f"fdx-export made its working copy before {sig.name}")
        check(code == -sig, f"fdx-export ends with {sig.name}", f"exit {code}")
        left = [n for n in os.listdir(tmp) if n.startswith("fdx-pg-")]
        check(not left, f"fdx-export ended by {sig.name} left no working copy", left)


def test_settings_after_a_reconnection():
    """A push cut off runs again on a new connection, which had the database's
    own settings, not fdx's: a statement timeout set for the database
    cancelled the retry. Each reconnection sets fdx's settings again."""
    db, rd = seeded()
    once = totals(uri(db))

    def short_timeout_then_cut(proxy, data, server):
        t = psql(f"ALTER DATABASE {db} SET statement_timeout = '10ms'", db=db)
        check(t.returncode == 0, "the database's statement timeout was set", t.stderr)
        return "cut"
    proxy = Proxy(db, b"-- Adds the staged miss cells", short_timeout_then_cut)
    try:
        r = fdx("fdx-ingest", proxy.uri(), rd)
    finally:
        proxy.close()
        psql(f"ALTER DATABASE {db} RESET statement_timeout", db=db)
    check(r.returncode == 0, "the push cut off ran again under fdx's settings", r.stderr)
    check(totals(uri(db)) == {k: 2 * v for k, v in once.items()}, "the run counted once")


def test_trigger_added_during_a_push():
    """A trigger added after the store was opened, before the push wrote the
    table it is on, acted on the push's rows (counts times 1000, committed):
    the push checks the tables again after its last write, and rolls back."""
    db, rd = seeded()
    before = totals(uri(db))

    def add_trigger(proxy, data, server):
        t = psql("CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN "
                 "NEW.count := NEW.count * 1000; RETURN NEW; END'; CREATE TRIGGER late BEFORE "
                 "INSERT ON dispatch_cell FOR EACH ROW EXECUTE FUNCTION f()", db=db)
        check(t.returncode == 0, "the trigger was added during the push", t.stderr)
    proxy = Proxy(db, b"-- Adds the staged miss cells", add_trigger)
    try:
        r = fdx("fdx-ingest", proxy.uri(), os.path.join(DATA, "basic", "input", "run_0001"))
    finally:
        proxy.close()
    check(r.returncode == 1 and "late" in r.stderr, "the push with a trigger added is refused",
          r.stderr)
    psql("DROP TRIGGER late ON dispatch_cell", db=db)
    check(totals(uri(db)) == before, "the refused push left the store as it was")


def test_daily_days_kept():
    """A push opened before another set --daily-days, and committed after it,
    wrote back the setting its working copy read at open: the other's was
    reverted, where in SQLite the later writer sees it."""
    db = new_db()
    store = uri(db)
    line = json.dumps(dict(schema=2, wanted="w", fallback=IMPL, count=1, hw=HW)) + "\n"
    feed = os.path.join(T, "daily-days.jsonl")
    with open(feed, "w") as f:
        f.write(line)
    r = fdx("fdx-ingest", "-q", "--run-id", "dd-0", store, feed)
    check(r.returncode == 0, "daily days: the store is made", r.stderr)
    tmp = os.path.join(T, "dd-b")
    os.makedirs(tmp)
    b = subprocess.Popen([tool("fdx-ingest"), "-q", "--run-id", "dd-b", store, "-"],
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, TMPDIR=tmp))
    # B has its working copy, and waits on its input with its connection idle
    deadline = time.time() + LIMIT
    while time.time() < deadline:
        idle = psql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() AND state LIKE 'idle%'", db).stdout.strip()
        if os.listdir(tmp) and idle not in ("", "0"):
            break
        time.sleep(0.05)
    r = fdx("fdx-ingest", "-q", "--daily-days", "10", "--run-id", "dd-a", store, feed)
    check(r.returncode == 0, "daily days: A sets 10", r.stderr)
    _, err = b.communicate(line, timeout=LIMIT)
    check(b.returncode == 0, "daily days: B commits after A", err)
    got = psql("SELECT daily_days FROM history_config", db).stdout.strip()
    check(got == "10", f"daily days: A's setting kept after B's push (got {got})")


def main():
    try:
        test_daily_days_kept()
        test_tools(*test_same_exports())
        test_views()
        test_one_handle()
        test_run_id()
        rds, conc = test_concurrent()
        test_killed(rds, conc)
        test_restart(rds, conc)
        test_password()
        test_commit_lost_while_committing()
        test_outcome_unknown()
        test_run_id_taken_during_a_push()
        test_server_notices_not_printed()
        test_busy_timeout()
        test_signals_leave_no_working_copy()
        test_settings_after_a_reconnection()
        test_trigger_added_during_a_push()
        test_crafted()
        test_bad_uris()
        test_roles()
        test_full_tmpdir()
        test_full_at_each_write()
    finally:
        shutil.rmtree(T, ignore_errors=True)
    return finish("pg")


if __name__ == "__main__":
    sys.exit(main())
