#!/usr/bin/env python3
"""Concurrent writers and readers on one store.

Six fdx-ingest processes start at once on a store that does not exist yet,
each running several ingests; meanwhile fdx-export and a plain SQLite reader
keep reading. Every ingest adds exactly 400 to the miss counts and 600 to the
dispatch counts, so a reader that ever saw a half-applied ingest, or two
files from different moments, finds miss_sum * 3 != dispatch_sum * 2. At the
end every cell's count must be exactly what was ingested: nothing lost,
nothing counted twice.

Usage: concurrency_test.py FDX_INGEST FDX_EXPORT
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading

from testlib import check, finish

WRITERS, INGESTS_EACH = 6, 8
IMPL = {"backend": "Cuda", "op": "MatMul", "dtypes": ["F16"], "kernel_source": "k",
        "kernel_revision_hash": 2748}
HW = {"compute_capability": [8, 9], "hardware_sku": "gpu", "driver_version": "1"}


def feed(path, writer):
    """40 miss lines of count 10 and 60 dispatch lines of count 10, over cells
    shared by every writer and cells of this writer's own."""
    with open(path, "w") as f:
        for i in range(40):
            f.write(json.dumps({"schema": 2, "wanted": f"w{i % 8}" if i % 2 else f"own{writer}-{i}",
                                "fallback": IMPL, "count": 10, "hw": HW}) + "\n")
        for i in range(60):
            f.write(json.dumps({"schema": 2, "structure_key": f"s{i % 5}", "chosen": IMPL,
                                "candidates": [{"impl_id": IMPL, "latency_ns": writer}],
                                "count": 10, "hw": HW}) + "\n")


def sums_of_export(out):
    total = []
    for name in ("misses.jsonl", "dispatches.jsonl"):
        with open(os.path.join(out, name)) as f:
            total.append(sum(json.loads(line)["count"] for line in f))
    return total


def creation_race(ingest, tmp):
    """Several processes creating the same new store at once all succeed."""
    path = os.path.join(tmp, "race.jsonl")
    feed(path, 0)
    for round_ in range(25):
        db = os.path.join(tmp, f"race{round_}.db")
        procs = [subprocess.Popen([ingest, "-q", db, path], stderr=subprocess.PIPE)
                 for _ in range(6)]
        for p in procs:
            _, err = p.communicate()
            check(p.returncode == 0, "creating a store concurrently", err.decode())


def creation_race_with_a_failing_creator(ingest, tmp):
    """A writer creating a new store beside one that creates it too and
    fails (a bad line) still ingests: the failed one removes the store it
    found unused, and the other, which had opened it but written nothing,
    makes it anew (it failed with "attempt to write a readonly database" or
    "No such file or directory" in about half the rounds)."""
    good, bad = os.path.join(tmp, "good.jsonl"), os.path.join(tmp, "bad.jsonl")
    feed(good, 0)
    with open(bad, "w") as f:
        f.write("{bad\n")
    failed = []
    for round_ in range(40):
        db = os.path.join(tmp, f"fail-race{round_}.db")
        procs = [subprocess.Popen([ingest, "-q", db, path], stderr=subprocess.PIPE)
                 for path in (good, bad)]
        errs = [p.communicate()[1].decode() for p in procs]
        check(procs[1].returncode == 1, "the bad line fails its ingest", errs[1])
        if procs[0].returncode != 0 or not os.path.exists(db):
            failed.append(f"round {round_}: exit {procs[0].returncode}: {errs[0].strip()}")
    check(not failed, "the good ingest beside a failing creator kept its store",
          "\n".join(failed[:3]))


def main():
    ingest, export = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="fdx-conc-") as tmp:
        creation_race(ingest, tmp)
        creation_race_with_a_failing_creator(ingest, tmp)
        db = os.path.join(tmp, "shared.db")
        feeds = []
        for w in range(WRITERS):
            feeds.append(os.path.join(tmp, f"feed{w}.jsonl"))
            feed(feeds[-1], w)
        scripts = [f"for i in $(seq {INGESTS_EACH}); do '{ingest}' -q --busy-timeout 60000 "
                   f"'{db}' '{feeds[w]}' || exit 1; done" for w in range(WRITERS)]
        writers = [subprocess.Popen(["bash", "-c", s], stderr=subprocess.PIPE) for s in scripts]
        stop = threading.Event()
        reads = {"export": 0, "sql": 0}

        def export_reader():
            out = os.path.join(tmp, "out")
            while not stop.is_set():
                p = subprocess.run([export, "--busy-timeout", "60000", db, out],
                                   capture_output=True)
                if p.returncode != 0:
                    # Before the first writer's first commit the store is
                    # missing, or an empty file it has just created.
                    if b"no such store" in p.stderr or b"(it is empty)" in p.stderr:
                        continue
                    check(False, "export failed", p.stderr.decode())
                    return
                m, d = sums_of_export(out)
                reads["export"] += 1
                check(m * 3 == d * 2, "export saw a partial ingest", f"misses {m}, dispatches {d}")

        def sql_reader():
            while not stop.is_set():
                if not os.path.exists(db):
                    continue
                try:
                    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60)
                    row = con.execute("SELECT (SELECT sum(count) FROM miss_cell),"
                                      " (SELECT sum(count) FROM dispatch_cell)").fetchone()
                    con.close()
                except sqlite3.OperationalError:
                    continue  # the schema may not exist yet
                m, d = row[0] or 0, row[1] or 0
                reads["sql"] += 1
                check(m * 3 == d * 2, "SQL saw a partial ingest", f"misses {m}, dispatches {d}")

        readers = [threading.Thread(target=export_reader), threading.Thread(target=sql_reader)]
        for t in readers:
            t.start()
        for w, p in enumerate(writers):
            _, err = p.communicate()
            check(p.returncode == 0, f"writer {w} failed", err.decode())
        stop.set()
        for t in readers:
            t.join()

        out = os.path.join(tmp, "final")
        subprocess.run([export, db, out], check=True, capture_output=True)
        runs = WRITERS * INGESTS_EACH
        m, d = sums_of_export(out)
        check((m, d) == (400 * runs, 600 * runs), "totals",
              f"got {m}, {d}; want {400 * runs}, {600 * runs}")
        with open(os.path.join(out, "misses.jsonl")) as f:
            for line in f:
                rec = json.loads(line)
                want = 50 * runs if rec["wanted"].startswith("w") else 10 * INGESTS_EACH
                check(rec["count"] == want, f"cell {rec['wanted']}",
                      f"count {rec['count']}, want {want}")
        con = sqlite3.connect(db)
        ledger = con.execute("SELECT count(*), sum(lines) FROM ingest_ledger").fetchone()
        con.close()
        check(ledger == (runs, 100 * runs), "ledger",
              f"holds {ledger}, want ({runs}, {100 * runs})")
        print(f"reads while writing: {reads['export']} exports, {reads['sql']} SQL queries")
    return finish("concurrency")


if __name__ == "__main__":
    sys.exit(main())
