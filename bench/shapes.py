"""The shapes where the line memo cannot help, measured by bench/run.py beside
its repeat-heavy feed: a store that grows (high cardinality), lines that never
repeat (adversarial), the same as a newer producer writes them (with members
no field has), sinks' flushes, memory as cardinality grows, cost per
line as the store grows, export of a large store, and merging hosts' stores.
fdx-ingest runs against the Python peer (peer.py) and, when node and
@duckdb/node-api are installed (npm install --prefix bench), the DuckDB peer
(duckdb_peer.mjs); each rep runs every tool in turn, so that each ratio
compares runs made under the same load.
"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from statistics import median

HERE = os.path.dirname(os.path.abspath(__file__))

FULL = {
    "highcard": dict(lines=800_000, cells=500_000),
    "adversarial": dict(runs=20, lines=5000, cells=5000, candidates=0.5),
    "flush": dict(runs=20, cells=25_000, candidates=0.2),
    "own_keys": dict(runs=6, cells=25_000, key_bytes=150),  # flush-shaped, a key per cell
    "rss_curve": [50_000, 160_000, 500_000],  # distinct cells; 1.6 lines per cell
    "store_curve": [10_000, 1_000_000, 5_000_000],  # cells already in the store
    "store_curve_lines": 100_000,
    "merge": dict(stores=10, cells=100_000, pool=200_000),
    "long_history": dict(cells=25_000, days=120),
}
SMOKE = {
    "highcard": dict(lines=8000, cells=5000),
    "adversarial": dict(runs=2, lines=300, cells=200, candidates=0.5),
    "flush": dict(runs=3, cells=500, candidates=0.2),
    "own_keys": dict(runs=2, cells=500, key_bytes=150),
    "rss_curve": [500, 1600, 5000],
    "store_curve": [1000, 10_000, 20_000],
    "store_curve_lines": 2000,
    "merge": dict(stores=10, cells=1000, pool=2000),
    "long_history": dict(cells=200, days=4),
}


def run(cmd, stderr_to=None):
    """Wall seconds, peak RSS (KiB) and standard error of cmd, measured with
    wait4 on the child itself."""
    err = tempfile.TemporaryFile()
    t = time.monotonic()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(err.fileno(), 2)
        os.execvp(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - t
    err.seek(0)
    text = err.read().decode(errors="replace")
    if status != 0:
        raise RuntimeError(f"{' '.join(cmd[:2])} ... failed ({status}): {text.strip()[-500:]}")
    return wall, usage.ru_maxrss, text


def fresh(path):
    for suffix in ("", "-wal", "-shm", ".wal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return path


def lowest_peak(t, db, runs, reps):
    """Wall seconds and peak RSS (KiB) of the rep, of reps ingests of runs into
    a fresh store db, whose peak was lowest; db is removed after."""
    best = min((run([t.ingest, "-q", fresh(db)] + runs)[:2] for _ in range(reps)),
               key=lambda x: x[1])
    fresh(db)
    return best


def gen(work, name, shape, **kw):
    """Runs of a shape, generated once under work (a finished marker makes a
    cut-short generation start again)."""
    d = os.path.join(work, name)
    done = os.path.join(work, name + ".done")
    if not os.path.exists(done):
        shutil.rmtree(d, ignore_errors=True)
        args = [sys.executable, os.path.join(HERE, "gen_shapes.py"), shape, d]
        for k, v in kw.items():
            args += [f"--{k.replace('_', '-')}", str(v)]
        subprocess.run(args, check=True)
        open(done, "w").close()
    return sorted(os.path.join(d, r) for r in os.listdir(d))


def duckdb_status():
    """None when the DuckDB peer can run, else why not."""
    if shutil.which("node") is None:
        return "node not found"
    if not os.path.isdir(os.path.join(HERE, "node_modules", "@duckdb", "node-api")):
        return "@duckdb/node-api not installed (npm install --prefix bench)"
    return None


def cell_count(db):
    con = sqlite3.connect(db)
    n = sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("miss_cell", "dispatch_cell"))
    con.close()
    return n


SUMMARY = re.compile(r"(\d+) cells added, (\d+) updated")


def summary_check(text, db):
    """Whether fdx-ingest's summary on a fresh store tells the truth: every
    cell added, none updated."""
    m = SUMMARY.search(text)
    if m is None:
        raise RuntimeError(f"no summary in: {text.strip()[-300:]}")
    added, updated = int(m.group(1)), int(m.group(2))
    cells = cell_count(db)
    return {"added": added, "updated": updated, "cells": cells,
            "true": added == cells and updated == 0}


class Tools:
    def __init__(self, build, work, duck):
        self.ingest = os.path.join(build, "fdx-ingest")
        self.export = os.path.join(build, "fdx-export")
        self.merge = os.path.join(build, "fdx-merge")
        self.work = work
        self.duck = duck  # None: the DuckDB peer runs


def compare(t, name, runs, reps, python=True):
    """fdx-ingest, the Python peer and the DuckDB peer on the same runs, each
    into a fresh store, reps times in turn. The first fdx-ingest run also
    checks the summary's counts."""
    db = os.path.join(t.work, f"{name}.db")
    fx, py, dk = [], [], []
    check = None
    for _ in range(reps):
        w, m, err = run([t.ingest, fresh(db)] + runs)
        fx.append((w, m))
        if check is None:
            check = summary_check(err, db)
        if python:
            py.append(run([sys.executable, os.path.join(HERE, "peer.py"),
                           fresh(db + ".peer")] + runs)[:2])
        if t.duck is None:
            duck_db = fresh(db + ".duckdb")
            w, m, _ = run(["node", os.path.join(HERE, "duckdb_peer.mjs"), duck_db] + runs)
            dk.append((w, m))
            fresh(duck_db)
    lines = 0
    for d in runs:
        for f in os.listdir(d):
            with open(os.path.join(d, f), "rb") as fh:
                lines += sum(buf.count(b"\n") for buf in iter(lambda: fh.read(1 << 20), b""))
    r = {"lines": lines, "cells": check["cells"], "fdx_seconds": median(w for w, _ in fx),
         "fdx_peak_rss_kib": max(m for _, m in fx), "summary": check}
    r["fdx_lines_per_s"] = lines / r["fdx_seconds"]
    if py:
        r["python_seconds"] = median(w for w, _ in py)
        r["python_peak_rss_kib"] = max(m for _, m in py)
        r["speedup_vs_python"] = r["python_seconds"] / r["fdx_seconds"]
    if dk:
        r["duckdb_seconds"] = median(w for w, _ in dk)
        r["duckdb_peak_rss_kib"] = max(m for _, m in dk)
        r["ratio_to_duckdb"] = r["fdx_seconds"] / r["duckdb_seconds"]
    fresh(db + ".peer")
    return r


def base_store(t, cells):
    """A store holding `cells` distinct cells, built once from a generated feed
    (each cell once, streamed) and kept under the work dir."""
    db = os.path.join(t.work, f"base_{cells}.db")
    if not os.path.exists(db + ".done"):
        runs = gen(t.work, f"base_{cells}", "highcard", lines=cells, cells=cells,
                   order="generated", runs=max(1, cells // 500_000), seed=7)
        w, m, _ = run([t.ingest, "-q", fresh(db)] + runs)
        with open(db + ".done", "w") as fh:
            fh.write(f"{w} {m}\n")
        shutil.rmtree(os.path.join(t.work, f"base_{cells}"))
    with open(db + ".done") as fh:
        w, m = fh.read().split()
    return db, float(w), int(m)


def copy_store(src, dst):
    fresh(dst)
    shutil.copyfile(src, dst)
    return dst


def settle_copy(t, db):
    """A copied store's first write gives it an identity of its own and
    relabels the history it holds as the original's (docs/FORMAT.md), once,
    in time proportional to that history. The curve measures what a store
    that grows in place costs per line, so each copy makes that write first,
    with nothing to ingest; its seconds are reported apart."""
    return run([t.ingest, "-q", db, os.devnull])[0]


def sql_store_add(db, cells_db):
    """Seconds the plain SQL insert of cells_db's cells into db takes
    (sql_store_add.py), as the script measures them."""
    out = subprocess.run([sys.executable, os.path.join(HERE, "sql_store_add.py"), db, cells_db],
                         check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def measure(build, work, smoke, reps, feed_runs):
    size = SMOKE if smoke else FULL
    work = os.path.join(work, "shapes")
    os.makedirs(work, exist_ok=True)
    t = Tools(build, work, duckdb_status())
    r = {"size": size, "duckdb": t.duck or "ran"}
    step = lambda s: print(f"[shapes] {s} ({time.strftime('%H:%M:%S')})", file=sys.stderr,
                           flush=True)

    if t.duck is None:
        step("repeat-heavy feed against DuckDB")
        r["repeat_heavy"] = compare(t, "repeat", feed_runs, reps, python=False)

    h = size["highcard"]
    step("high cardinality")
    runs = gen(work, "highcard", "highcard", seed=11, **h)
    r["highcard"] = compare(t, "highcard", runs, reps)

    step("adversarial")
    r["adversarial"] = compare(t, "adversarial",
                               gen(work, "adversarial", "adversarial", seed=12,
                                   **size["adversarial"]), reps)
    # The same lines as a producer newer than this schema's readers writes
    # them: members no field has in every record, which readers ignore.
    step("adversarial, records of a newer producer")
    r["newer"] = compare(t, "newer", gen(work, "newer", "adversarial", seed=12, newer_fields=3,
                                         **size["adversarial"]), reps)
    step("flush-shaped")
    r["flush"] = compare(t, "flush", gen(work, "flush", "flush", seed=13, **size["flush"]),
                         reps)

    # The benchmark's keys are shared by many cells; keys that spell out
    # shapes are each a cell's own, and a budget of them holds more bytes of
    # strings than of anything else.
    step("flush-shaped, keys of a cell's own")
    ok = size["own_keys"]
    pts = gen(work, "own_keys", "flush", seed=14, **ok)
    w, m = lowest_peak(t, os.path.join(work, "own_keys.db"), pts, reps)
    r["own_keys"] = {**ok, "lines": 2 * ok["runs"] * ok["cells"], "seconds": w,
                     "peak_rss_kib": m}

    # Peak RSS as cardinality grows 10x (the largest point is the feed above,
    # at the same ratio of lines to cells).
    step("RSS curve")
    curve = []
    ratio = h["lines"] / h["cells"]
    for cells in size["rss_curve"]:
        if cells == h["cells"]:
            pts = runs
        else:
            pts = gen(work, f"rss_{cells}", "highcard", seed=11, cells=cells,
                      lines=int(cells * ratio))
        w, m = lowest_peak(t, os.path.join(work, "rss.db"), pts, reps)
        curve.append({"cells": cells, "lines": int(cells * ratio), "seconds": w,
                      "peak_rss_kib": m})
    r["rss_curve"] = curve

    # The same lines into stores of growing size.
    step("store-size curve")
    n = size["store_curve_lines"]
    add = gen(work, "store_add", "highcard", seed=21, lines=n, cells=int(n / 1.6))
    # The cells those lines make, for the plain SQL insert of the same cells.
    add_cells = os.path.join(work, "store_add_cells.db")
    run([t.ingest, "-q", fresh(add_cells)] + add)
    curve = []
    for cells in size["store_curve"]:
        base, build_s, build_rss = base_store(t, cells)
        db = os.path.join(work, "grow.db")
        ts, settle, sql = [], [], []
        for _ in range(reps):
            copy_store(base, db)
            settle.append(settle_copy(t, db))
            w, m, _ = run([t.ingest, "-q", db] + add)
            ts.append((w, m))
            copy_store(base, db)
            settle_copy(t, db)
            sql.append(sql_store_add(db, add_cells))
        w = median(x for x, _ in ts)
        curve.append({"store_cells": cells, "lines": n, "seconds": w,
                      "us_per_line": w / n * 1e6, "peak_rss_kib": max(m for _, m in ts),
                      "sql_insert_seconds": median(sql),
                      "sql_insert_us_per_line": median(sql) / n * 1e6,
                      "copy_first_write_seconds": median(settle),
                      "build_seconds": build_s, "build_peak_rss_kib": build_rss})
        fresh(db)
    fresh(add_cells)
    r["store_curve"] = curve

    # Export of the 1M-cell store (the largest store of the curve under it).
    step("export")
    cells = [c for c in size["store_curve"] if c <= (1_000_000 if not smoke else 10_000)][-1]
    base = base_store(t, cells)[0]
    out = os.path.join(work, "export")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    ex = [run([t.export, base, out])[:2] for _ in range(reps)]
    n_cells = cell_count(base)
    r["export"] = {"cells": n_cells, "seconds": median(w for w, _ in ex),
                   "peak_rss_kib": max(m for _, m in ex)}
    r["export"]["cells_per_s"] = n_cells / r["export"]["seconds"]
    shutil.rmtree(out)

    # Merging hosts' stores: fdx-merge against the same fold in plain SQL.
    step("merge")
    mg = size["merge"]
    srcs = []
    for i in range(mg["stores"]):
        db = os.path.join(work, f"host_{i}.db")
        if not os.path.exists(db + ".done"):
            hr = gen(work, f"host_{i}", "highcard", seed=31, sample_seed=100 + i,
                     lines=mg["cells"], cells=mg["cells"], pool=mg["pool"])
            run([t.ingest, "-q", fresh(db)] + hr)
            open(db + ".done", "w").close()
            shutil.rmtree(os.path.join(work, f"host_{i}"))
        srcs.append(db)
    dst = os.path.join(work, "merged.db")
    fm, sq = [], []
    for _ in range(reps):
        fm.append(run([t.merge, "-q", fresh(dst)] + srcs)[:2])
        merged = cell_count(dst)
        sq.append(run([sys.executable, os.path.join(HERE, "sql_merge.py"), fresh(dst + ".sql")]
                      + srcs)[:2])
        sql_cells = cell_count(dst + ".sql")
    fresh(dst)
    fresh(dst + ".sql")
    r["merge"] = {"stores": mg["stores"], "cells_read": mg["stores"] * mg["cells"],
                  "cells_merged": merged, "sql_cells_merged": sql_cells,
                  "fdx_seconds": median(w for w, _ in fm),
                  "fdx_peak_rss_kib": max(m for _, m in fm),
                  "sql_seconds": median(w for w, _ in sq)}
    r["merge"]["cells_per_s"] = r["merge"]["cells_read"] / r["merge"]["fdx_seconds"]
    r["merge"]["ratio_to_sql"] = r["merge"]["fdx_seconds"] / r["merge"]["sql_seconds"]
    step("merge of a long history")
    r["long_history"] = long_history(t, size["long_history"], reps)
    step("PostgreSQL loads")
    r["postgres"] = postgres_loads(build, smoke)
    return r


# The first day of the long history: 2026-01-01, 00:00 UTC.
LONG_HISTORY_START = 1767225600


def long_history(t, lh, reps):
    """fdx-merge of a store whose cells were each seen on many days (so its
    history, not its cells, is the bulk of it): into an empty store, then,
    after the source saw one more day, again into the store that merged it
    (every earlier row of the source is then on both sides)."""
    feed = gen(t.work, "long_history", "highcard", seed=41, lines=lh["cells"],
               cells=lh["cells"])
    src = os.path.join(t.work, "long_history.db")
    if not os.path.exists(src + ".done"):
        fresh(src)
        for d in range(lh["days"]):
            run([t.ingest, "-q", "--at", f"@{LONG_HISTORY_START + d * 86400}", src] + feed)
        open(src + ".done", "w").close()
    con = sqlite3.connect(src)
    rows = con.execute("SELECT count(*) FROM cell_history").fetchone()[0]
    con.close()
    dst = os.path.join(t.work, "long_history_merged.db")
    later = os.path.join(t.work, "long_history_later.db")
    first, again = [], []
    for _ in range(reps):
        first.append(run([t.merge, "-q", fresh(dst), src])[:2])
        copy_store(src, later)
        settle_copy(t, later)
        run([t.ingest, "-q", "--at", f"@{LONG_HISTORY_START + lh['days'] * 86400}", later]
            + feed)
        again.append(run([t.merge, "-q", dst, later])[:2])
    fresh(dst)
    fresh(later)
    r = {"cells": lh["cells"], "days": lh["days"], "history_rows": rows,
         "first_seconds": median(w for w, _ in first),
         "again_seconds": median(w for w, _ in again),
         "peak_rss_kib": max(m for _, m in first + again)}
    r["rows_per_s"] = rows / r["first_seconds"]
    return r


def postgres_loads(build, smoke):
    """bench/pg_load.py's figures (its own throwaway server), or why there are none."""
    if smoke:
        return "not measured in a smoke run (python3 bench/pg_load.py measures them)"
    import pg_load
    try:
        return pg_load.measure(build)
    except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
        return f"not measured: {e}"


def report_lines(r):
    """The shapes' part of the report."""
    mib = lambda k: k / 1024
    out = [f"shapes (DuckDB peer: {'ran' if r['duckdb'] == 'ran' else 'skipped (' + r['duckdb'] + ')'})"]
    for key, title in (("repeat_heavy", "repeat-heavy"), ("highcard", "high cardinality"),
                       ("adversarial", "adversarial"),
                       ("newer", "adversarial, newer producer"), ("flush", "flush-shaped")):
        if key not in r:
            continue
        s = r[key]
        line = (f"  {title:27s} {s['lines']:,} lines, {s['cells']:,} cells: fdx "
                f"{s['fdx_seconds']:.2f} s ({s['fdx_lines_per_s']:,.0f} lines/s, "
                f"{mib(s['fdx_peak_rss_kib']):.1f} MiB)")
        if "python_seconds" in s:
            line += f", Python {s['python_seconds']:.2f} s ({s['speedup_vs_python']:.1f}x)"
        if "duckdb_seconds" in s:
            line += (f", DuckDB {s['duckdb_seconds']:.2f} s ({mib(s['duckdb_peak_rss_kib']):.0f}"
                     f" MiB; fdx/DuckDB {s['ratio_to_duckdb']:.2f}x)")
        out.append(line)
        c = s["summary"]
        out.append(f"  {'':27s} summary on a fresh store: {c['added']:,} added, "
                   f"{c['updated']:,} updated; store holds {c['cells']:,} cells: "
                   f"{'true' if c['true'] else 'FALSE'}")
    if "own_keys" in r:
        k = r["own_keys"]
        out.append(f"  flush-shaped, keys of a cell's own ({k['key_bytes']} bytes): "
                   f"{k['lines']:,} lines, {2 * k['cells']:,} cells: fdx {k['seconds']:.2f} s "
                   f"({mib(k['peak_rss_kib']):.1f} MiB)")
    out.append("  peak RSS by cardinality: " + ", ".join(
        f"{p['cells']:,} cells {mib(p['peak_rss_kib']):.1f} MiB ({p['seconds']:.2f} s)"
        for p in r["rss_curve"]))
    out.append("  the same lines into a store of: " + ", ".join(
        f"{p['store_cells']:,} cells {p['us_per_line']:.1f} us/line "
        f"({mib(p['peak_rss_kib']):.1f} MiB)" for p in r["store_curve"]))
    if all("sql_insert_us_per_line" in p for p in r["store_curve"]):
        pts = r["store_curve"]
        out.append("  the cells those lines add, inserted in plain SQL (the least SQLite "
                   "takes): " + ", ".join(
                       f"{p['store_cells']:,} cells {p['sql_insert_us_per_line']:.1f} us/line "
                       f"(fdx/SQL {p['seconds'] / p['sql_insert_seconds']:.2f}x)" for p in pts)
                   + f"; largest / smallest {_spread(pts, 'sql_insert_us_per_line'):.2f}x, "
                   f"fdx's {_spread(pts, 'us_per_line'):.2f}x")
    out.append("  a copy's first write (relabelling its history, once): " + ", ".join(
        f"{p['store_cells']:,} cells {p['copy_first_write_seconds']:.2f} s"
        for p in r["store_curve"] if "copy_first_write_seconds" in p))
    out.append("  building those stores (each cell once): " + ", ".join(
        f"{p['store_cells']:,} cells {p['build_seconds']:.1f} s "
        f"({p['store_cells'] / p['build_seconds']:,.0f} lines/s, "
        f"{mib(p['build_peak_rss_kib']):.1f} MiB)" for p in r["store_curve"]))
    e, m = r["export"], r["merge"]
    out.append(f"  fdx-export       {e['cells']:,} cells in {e['seconds']:.2f} s "
               f"({e['cells_per_s']:,.0f} cells/s, {mib(e['peak_rss_kib']):.1f} MiB)")
    out.append(f"  fdx-merge        {m['stores']} stores, {m['cells_read']:,} cells read, "
               f"{m['cells_merged']:,} merged: {m['fdx_seconds']:.2f} s "
               f"({m['cells_per_s']:,.0f} cells/s, {mib(m['fdx_peak_rss_kib']):.1f} MiB); "
               f"plain SQL {m['sql_seconds']:.2f} s ({m['sql_cells_merged']:,} cells)")
    if "long_history" in r:
        h = r["long_history"]
        out.append(f"  fdx-merge of a long history: {h['cells']:,} cells seen on {h['days']} "
                   f"days ({h['history_rows']:,} history rows): into an empty store "
                   f"{h['first_seconds']:.2f} s ({h['rows_per_s']:,.0f} rows/s), again after "
                   f"one more day {h['again_seconds']:.2f} s ({mib(h['peak_rss_kib']):.1f} MiB)")
    out.append("  PostgreSQL loads: " + postgres_line(r["postgres"]))
    return out


def postgres_line(p):
    if isinstance(p, str):
        return p
    line = (f"{p['cells']:,} cells ({p['lines']:,} lines): fdx-ingest "
            f"{p['ingest_pg_cells_per_s']:,.0f} cells/s (into SQLite "
            f"{p['ingest_sqlite_cells_per_s']:,.0f}), fdx-merge of an SQLite store "
            f"{p['merge_pg_cells_per_s']:,.0f} cells/s (into SQLite "
            f"{p['merge_sqlite_cells_per_s']:,.0f})")
    if "row_loop_cells_per_s" in p:
        line += (f"; a per-row INSERT ... ON CONFLICT loop {p['row_loop_cells_per_s']:,.0f} "
                 f"cells/s")
    return line


def _shape_ratio(key, field):
    return lambda r: r["shapes"][key][field] if field in r["shapes"].get(key, {}) else None


def _max_rss_all(r):
    s = r["shapes"]
    pts = [p["peak_rss_kib"] for p in s["rss_curve"]] + \
          [p["peak_rss_kib"] for p in s["store_curve"]] + \
          [p["build_peak_rss_kib"] for p in s["store_curve"]] + \
          [s[k]["fdx_peak_rss_kib"] for k in ("highcard", "adversarial", "newer", "flush")
           if k in s] + \
          ([s["own_keys"]["peak_rss_kib"]] if "own_keys" in s else [])
    return max(pts) / 1024


def _spread(points, field):
    vals = [p[field] for p in points]
    return max(vals) / min(vals)


TARGETS = [
    ("repeat-heavy: fdx-ingest / DuckDB (time ratio)", _shape_ratio("repeat_heavy",
                                                                     "ratio_to_duckdb"),
     "<=", 1.0),
    ("high cardinality: fdx-ingest / DuckDB (time ratio)", _shape_ratio("highcard",
                                                                         "ratio_to_duckdb"),
     "<=", 1.0),
    ("high cardinality: speed-up vs Python", _shape_ratio("highcard", "speedup_vs_python"),
     ">=", 10),
    ("adversarial: fdx-ingest / DuckDB (time ratio)", _shape_ratio("adversarial",
                                                                    "ratio_to_duckdb"),
     "<=", 1.0),
    ("adversarial: speed-up vs Python", _shape_ratio("adversarial", "speedup_vs_python"),
     ">=", 15),
    ("adversarial, newer producer: fdx-ingest / DuckDB (time ratio)",
     _shape_ratio("newer", "ratio_to_duckdb"), "<=", 1.0),
    ("adversarial, newer producer: speed-up vs Python",
     _shape_ratio("newer", "speedup_vs_python"), ">=", 15),
    ("flush-shaped: fdx-ingest / DuckDB (time ratio)", _shape_ratio("flush", "ratio_to_duckdb"),
     "<=", 1.0),
    ("flush-shaped: speed-up vs Python", _shape_ratio("flush", "speedup_vs_python"), ">=", 15),
    ("adversarial: peak RSS (MiB)", lambda r: r["shapes"]["adversarial"]["fdx_peak_rss_kib"]
     / 1024, "<", 32),
    ("adversarial, newer producer: peak RSS (MiB)",
     lambda r: r["shapes"]["newer"]["fdx_peak_rss_kib"] / 1024 if "newer" in r["shapes"]
     else None, "<", 32),
    ("flush-shaped: peak RSS (MiB)", lambda r: r["shapes"]["flush"]["fdx_peak_rss_kib"] / 1024,
     "<", 32),
    ("flush-shaped, keys of a cell's own: peak RSS (MiB)",
     lambda r: r["shapes"]["own_keys"]["peak_rss_kib"] / 1024 if "own_keys" in r["shapes"]
     else None, "<", 32),
    ("peak RSS at any cardinality, store size (MiB)", _max_rss_all, "<", 64),
    ("peak RSS, 10x cardinality / 1x (ratio)",
     lambda r: r["shapes"]["rss_curve"][-1]["peak_rss_kib"]
     / r["shapes"]["rss_curve"][0]["peak_rss_kib"], "<=", 1.5),
    ("cost per line, largest / smallest over store sizes",
     lambda r: _spread(r["shapes"]["store_curve"], "us_per_line"), "<=", 2.0),
    ("fdx-export of the large store (cells/s)", lambda r: r["shapes"]["export"]["cells_per_s"],
     ">=", 500000),
    ("fdx-merge / plain SQL merge (time ratio)", lambda r: r["shapes"]["merge"]["ratio_to_sql"],
     "<=", 1.0),
    ("summary's added/updated true on a fresh store (all shapes)",
     lambda r: float(all(r["shapes"][k]["summary"]["true"]
                         for k in ("repeat_heavy", "highcard", "adversarial", "newer",
                                   "flush")
                         if k in r["shapes"])), ">=", 1),
]
