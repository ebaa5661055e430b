#!/usr/bin/env python3
"""The fdx benchmark runner: every measurement in one run on the same data,
reported as ratios against peers measured in the same run (these machines
are shared and noisy). Prints a report and saves it (text and JSON).

  run.py [--smoke] [--build DIR] [--work DIR] [--out DIR] [--reps N]
         [--sections classic,shapes]

Full size: 100 runs x 5,000 lines per kind over 5,000 distinct cells per kind
(1,000,000 lines), and the shapes of shapes.py (high cardinality, adversarial,
flush-shaped, stores up to 5,000,000 cells: the first run generates and builds
them under the work dir, which takes a while). --smoke runs everything on small
feeds, for CI. --sections picks the repeat-heavy measurements ("classic"), the
other shapes ("shapes"), or both (the default).
"""
import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

import shapes
from shapes import fresh

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd, env=None, stdin=None):
    """Wall seconds and peak RSS (KiB) of one command."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         stdin=stdin)
    out, err = p.communicate()
    _, status, usage = os.wait4(p.pid, 0) if p.returncode is None else (0, 0, None)
    wall = time.monotonic() - t
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {err.decode(errors='replace')}")
    return wall, out.decode(), usage


def run_rss(cmd):
    """Wall seconds and peak RSS of cmd, via wait4 on the child itself."""
    t = time.monotonic()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - t
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({status})")
    return wall, usage.ru_maxrss


def gen(work, name, **kw):
    d = os.path.join(work, name)
    if not os.path.isdir(d):
        args = [sys.executable, os.path.join(HERE, "gen_feed.py"), d]
        for k, v in kw.items():
            args += [f"--{k}", str(v)]
        subprocess.run(args, check=True)
    return sorted(os.path.join(d, r) for r in os.listdir(d))


def median(xs):
    return statistics.median(xs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--reps", type=int, default=0)
    ap.add_argument("--sections", default="classic,shapes")
    a = ap.parse_args()
    sections = set(a.sections.split(","))
    if not sections or sections - {"classic", "shapes"}:
        ap.error("--sections: a comma-separated list of classic and shapes")
    size = dict(runs=4, lines=500, cells=200) if a.smoke else dict(runs=100, lines=5000,
                                                                   cells=5000)
    reps = a.reps or (1 if a.smoke else 3)
    work = os.path.join(a.work, "smoke" if a.smoke else "full")
    os.makedirs(work, exist_ok=True)
    r = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                     "processor": platform.processor() or platform.machine()},
         "size": size, "reps": reps}

    runs = gen(work, "feed", seed=1, candidates=0.2, **size)
    if "classic" in sections:
        classic(a, r, work, runs, size, reps)
    if "shapes" in sections:
        r["shapes"] = shapes.measure(a.build, work, a.smoke, reps, runs)
    report(r, a.out, a.smoke)


def classic(a, r, work, runs, size, reps):
    """The repeat-heavy feed: ingest and its peers, export, record calls, many
    run directories, the demand query."""
    b = lambda name: os.path.join(a.build, name)
    ingest, export, floor, record = b("fdx-ingest"), b("fdx-export"), b("parse_floor"), \
        b("record_bench")
    total_bytes = sum(os.path.getsize(os.path.join(d, f)) for d in runs for f in os.listdir(d))
    lines = 2 * size["runs"] * size["lines"]
    db = os.path.join(work, "store.db")

    # Ingest, the parse floor, the single-threaded path and the Python peer,
    # interleaved, so that each ratio compares runs made under the same load.
    t_ingest, t_floor, t_single, rss, tp = [], [], [], [], []
    for _ in range(reps):
        w, m = run_rss([ingest, "-q", fresh(db)] + runs)
        t_ingest.append(w)
        rss.append(m)
        t_floor.append(run_rss([floor] + runs)[0])
        t_single.append(run_rss([ingest, "-q", "--threads", "1", fresh(db + ".1")] + runs)[0])
        tp.append(run_rss([sys.executable, os.path.join(HERE, "peer.py"), fresh(db + ".peer")]
                          + runs))
    run_rss([ingest, "-q", fresh(db)] + runs)
    ti, tf, ts = median(t_ingest), median(t_floor), median(t_single)
    r["ingest"] = {"lines": lines, "bytes": total_bytes, "seconds": ti,
                   "lines_per_s": lines / ti, "mb_per_s": total_bytes / ti / 1e6,
                   "peak_rss_kib": max(rss), "single_thread_seconds": ts}
    r["parse_floor"] = {"seconds": tf, "ratio_ingest_to_floor": ti / tf}

    tpm = median(t for t, _ in tp)
    r["peer"] = {"seconds": tpm, "speedup_of_fdx": tpm / ti, "peak_rss_kib": max(m for _, m in tp)}

    # Memory stays flat as the input grows 10x.
    tenth = runs[:max(1, len(runs) // 10)]
    small_rss = run_rss([ingest, "-q", fresh(db + ".tenth")] + tenth)[1]
    r["rss_growth"] = {"tenth_input_kib": small_rss, "full_input_kib": max(rss),
                       "ratio": max(rss) / small_rss}

    # Export: a store with many cells.
    big = gen(work, "manycells", seed=2, runs=1, lines=50 * size["lines"],
              cells=50 * size["cells"], candidates=0.2)
    bigdb = fresh(os.path.join(work, "manycells.db"))
    run_rss([ingest, "-q", bigdb] + big)
    con = sqlite3.connect(bigdb)
    cells = sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("miss_cell", "dispatch_cell"))
    con.close()
    t_export = [run_rss([export, bigdb, os.path.join(work, "export")]) for _ in range(reps)]
    te = median(w for w, _ in t_export)
    r["export"] = {"cells": cells, "seconds": te, "cells_per_s": cells / te,
                   "peak_rss_kib": max(m for _, m in t_export)}

    # In-process record calls.
    calls = 200000 if a.smoke else 5000000
    outs = [subprocess.run([record, fresh(db + ".rec"), str(calls), str(size["cells"])],
                           check=True, capture_output=True, text=True).stdout.split()
            for _ in range(reps)]
    store_ns, sink_ns, handle_ns = (median(float(o[k]) for o in outs) for k in range(3))
    r["record"] = {"calls": calls, "store_ns": store_ns, "sink_ns": sink_ns,
                   "sink_handle_ns": handle_ns}

    # Many small run directories against the same lines as one file.
    many_runs = 100 if a.smoke else 10000
    dirs = gen(work, "manydirs", seed=3, runs=many_runs, lines=50, cells=size["cells"])
    onefile = os.path.join(work, "manydirs.jsonl")
    if not os.path.exists(onefile):
        with open(onefile, "wb") as out_f:
            for d in dirs:
                for n in ("misses.jsonl", "dispatches.jsonl"):
                    with open(os.path.join(d, n), "rb") as f:
                        shutil.copyfileobj(f, out_f)
    t_dirs, t_file = [], []
    for _ in range(reps):
        t_dirs.append(run_rss([ingest, "-q", fresh(db + ".dirs")] + dirs)[0])
        t_file.append(run_rss([ingest, "-q", fresh(db + ".file"), onefile])[0])
    r["many_dirs"] = {"dirs": many_runs, "lines": 100 * many_runs, "dirs_seconds": median(t_dirs),
                      "one_file_seconds": median(t_file),
                      "ratio": median(t_dirs) / median(t_file)}

    # The miss-demand query after 10 runs and after 1,000 runs.
    def demand_time(path):
        con = sqlite3.connect(path)
        ts = []
        for _ in range(15):
            t = time.monotonic()
            con.execute("SELECT * FROM miss_demand").fetchall()
            ts.append(time.monotonic() - t)
        n = con.execute("SELECT count(*) FROM miss_cell").fetchone()[0]
        con.close()
        return median(ts), n
    # Both stores absorb the main feed's runs (which cover the same cells):
    # 10 of them, and 1,000 (the feed again and again).
    n_small, n_large = (2, 20) if a.smoke else (10, 1000)
    q10 = fresh(db + ".q10")
    run_rss([ingest, "-q", q10] + runs[:n_small])
    q1000 = fresh(db + ".q1000")
    for start in range(0, n_large, len(runs)):
        run_rss([ingest, "-q", q1000] + runs[:min(len(runs), n_large - start)])
    (t10, c10), (t1000, c1000) = demand_time(q10), demand_time(q1000)
    r["demand_query"] = {"runs_small": n_small, "seconds_small": t10,
                         "cells_small": c10, "runs_large": n_large,
                         "seconds_large": t1000, "cells_large": c1000,
                         "ratio": t1000 / t10}


TARGETS = [
    ("fdx-ingest vs Python peer (speed-up)", lambda r: r["peer"]["speedup_of_fdx"], ">=", 15),
    ("fdx-ingest / parse floor (time ratio)", lambda r: r["parse_floor"]["ratio_ingest_to_floor"],
     "<=", 1.3),
    ("fdx-ingest peak RSS (MiB)", lambda r: r["ingest"]["peak_rss_kib"] / 1024, "<", 32),
    ("peak RSS, full input / tenth of it", lambda r: r["rss_growth"]["ratio"], "<=", 1.5),
    ("fdx-export (cells/s)", lambda r: r["export"]["cells_per_s"], ">=", 500000),
    ("store record call (ns)", lambda r: r["record"]["store_ns"], "<", 1000),
    ("sink record call (ns)", lambda r: r["record"]["sink_ns"], "<", 50),
    ("sink call through cell handles (ns)", lambda r: r["record"]["sink_handle_ns"], "<", 50),
    ("many run dirs / one file (time ratio)", lambda r: r["many_dirs"]["ratio"], "<=", 1.5),
    ("demand query, 1000 runs / 10 runs (time ratio)", lambda r: r["demand_query"]["ratio"],
     "<=", 1.5),
]


def report(r, out_dir, smoke):
    ops = {">=": lambda x, y: x >= y, "<=": lambda x, y: x <= y, "<": lambda x, y: x < y}
    lines = [f"fdx benchmark ({'smoke' if smoke else 'full'} size: {r['size']}, "
             f"{r['reps']} rep(s), median), {r['machine']['cpus']} CPUs, "
             f"{r['machine']['platform']}", ""]
    if "ingest" in r:
        i, f, p = r["ingest"], r["parse_floor"], r["peer"]
        lines += [f"fdx-ingest      {i['lines']} lines, {i['bytes'] / 1e6:.0f} MB in {i['seconds']:.2f} s:"
                  f" {i['lines_per_s']:,.0f} lines/s, {i['mb_per_s']:.0f} MB/s, peak RSS "
                  f"{i['peak_rss_kib'] / 1024:.1f} MiB (one thread: {i['single_thread_seconds']:.2f} s)",
                  f"parse floor     {f['seconds']:.2f} s (cJSON parse + delete per line)",
                  f"Python peer     {p['seconds']:.2f} s, peak RSS {p['peak_rss_kib'] / 1024:.1f} MiB",
                  f"fdx-export      {r['export']['cells']} cells in {r['export']['seconds']:.3f} s, "
                  f"peak RSS {r['export']['peak_rss_kib'] / 1024:.1f} MiB",
                  f"record calls    store {r['record']['store_ns']:.0f} ns, sink "
                  f"{r['record']['sink_ns']:.0f} ns, sink through cell handles "
                  f"{r['record']['sink_handle_ns']:.1f} ns",
                  f"many run dirs   {r['many_dirs']['dirs']} dirs {r['many_dirs']['dirs_seconds']:.2f} s,"
                  f" one file {r['many_dirs']['one_file_seconds']:.2f} s",
                  f"demand query    {r['demand_query']['runs_small']} runs "
                  f"({r['demand_query']['cells_small']} cells) {r['demand_query']['seconds_small'] * 1e3:.2f}"
                  f" ms, {r['demand_query']['runs_large']} runs ({r['demand_query']['cells_large']} cells)"
                  f" {r['demand_query']['seconds_large'] * 1e3:.2f} ms", ""]
    if "shapes" in r:
        lines += shapes.report_lines(r["shapes"]) + [""]
    lines.append("targets (judged at full size only; at smoke size start-up costs dominate):"
                 if smoke else "targets:")
    r["targets"] = []
    targets = (TARGETS if "ingest" in r else []) + (shapes.TARGETS if "shapes" in r else [])
    for name, get, op, want in targets:
        got = get(r)
        if got is None:
            r["targets"].append({"name": name, "value": None, "op": op, "target": want,
                                 "met": None})
            lines.append(f"  skip  {name}: not measured (DuckDB peer skipped)")
            continue
        ok = ops[op](got, want)
        r["targets"].append({"name": name, "value": got, "op": op, "target": want, "met": ok})
        verdict = "  -  " if smoke else "met " if ok else "MISS"
        lines.append(f"  {verdict}  {name}: {got:,.2f} (target {op} {want:,})")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, "smoke" if smoke else "latest")
    with open(stem + ".txt", "w") as fh:
        fh.write(text)
    with open(stem + ".json", "w") as fh:
        json.dump(r, fh, indent=1)


if __name__ == "__main__":
    main()
