#!/usr/bin/env python3
"""Loading PostgreSQL: cells per second that fdx-ingest puts into a PostgreSQL
store, against a per-row INSERT ... ON CONFLICT DO UPDATE loop written the way
a user would (psycopg2, one statement per feed line, one transaction), on the
same generated feed, each into an empty database; and cells per second that
fdx-merge folds an SQLite store of that feed into an empty PostgreSQL store
(and into an SQLite one). fdx-ingest into an SQLite store is measured too, for
scale. Numbers are reported, never asserted.

  pg_load.py [--build DIR] [--lines N] [--cells N] [--uri URI]

Without --uri, a throwaway server is started with scripts/pg_cluster.sh and
removed afterwards. The psycopg2 loop needs python3-psycopg2; without it the
runner says so and measures fdx alone.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "..", "scripts", "pg_cluster.sh")
FLIP = 1 << 63


def psql(uri, sql):
    subprocess.run(["psql", "-qAtX", "-v", "ON_ERROR_STOP=1", uri, "-c", sql], check=True,
                   capture_output=True)


def fresh_db(admin, name):
    psql(admin, f"DROP DATABASE IF EXISTS {name}")
    psql(admin, f"CREATE DATABASE {name}")
    return admin.replace("///postgres?", f"///{name}?")


def timed(cmd):
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {r.stderr}")
    return time.monotonic() - t


def signed(h):
    v = h ^ FLIP
    return v - (1 << 64) if v >= FLIP else v


def row_loop(uri, feed):
    """The user's loop: one upsert per line, miss and dispatch tables alike."""
    import psycopg2
    conn = psycopg2.connect(uri)
    cur = conn.cursor()
    t = time.monotonic()
    for name in ("misses.jsonl", "dispatches.jsonl"):
        for line in open(os.path.join(feed, name), encoding="utf-8"):
            r = json.loads(line)
            hw = r["hw"]
            cc = hw.get("compute_capability", [-1, -1])
            impl = r.get("fallback") or r["chosen"]
            common = (impl["backend"], impl["op"], json.dumps(impl["dtypes"], separators=(",", ":")),
                      impl["kernel_source"], signed(impl["kernel_revision_hash"]), cc[0], cc[1],
                      hw["hardware_sku"], hw["driver_version"], max(r.get("count", 1), 1))
            if "wanted" in r:
                cur.execute(
                    "INSERT INTO miss_cell (wanted, backend, op, dtypes, kernel_source,"
                    " kernel_revision_hash, cc_major, cc_minor, hardware_sku, driver_version,"
                    " count) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (wanted, kernel_source, kernel_revision_hash, backend, op,"
                    " dtypes, cc_major, cc_minor, hardware_sku, driver_version)"
                    " DO UPDATE SET count = miss_cell.count + excluded.count",
                    (r["wanted"],) + common)
            else:
                key = r.get("structure_key")
                cands = json.dumps(r.get("candidates", []), separators=(",", ":"))
                cur.execute(
                    "INSERT INTO dispatch_cell (keyed, structure_key, backend, op, dtypes,"
                    " kernel_source, kernel_revision_hash, cc_major, cc_minor, hardware_sku,"
                    " driver_version, count, candidates) VALUES (%s, %s, %s, %s, %s, %s, %s,"
                    " %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (keyed, structure_key, kernel_source, kernel_revision_hash,"
                    " backend, op, dtypes, cc_major, cc_minor, hardware_sku, driver_version)"
                    " DO UPDATE SET count = dispatch_cell.count + excluded.count,"
                    " candidates = CASE WHEN excluded.candidates = '[]'"
                    " THEN dispatch_cell.candidates ELSE excluded.candidates END",
                    (int(key is not None), key or "") + common + (cands,))
    conn.commit()
    conn.close()
    return time.monotonic() - t


def measure(build, lines=50000, cells=20000, uri=None):
    """The figures as a dict (cells/s of each load); a server of its own
    unless uri names one. Raises on a failed step."""
    work = tempfile.mkdtemp(prefix="fdx-pg-load-")
    state = os.path.join(work, "cluster.state")
    ingest = os.path.join(build, "fdx-ingest")
    started = False
    try:
        admin = uri
        if not admin:
            subprocess.run(["bash", CLUSTER, "start", state], check=True, capture_output=True)
            started = True
            admin = subprocess.run(["bash", CLUSTER, "uri", state], check=True,
                                   capture_output=True, text=True).stdout.strip()
        feed_root = os.path.join(work, "feed")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_feed.py"), feed_root, "--runs",
                        "1", "--lines", str(lines), "--cells", str(cells), "--seed", "5"],
                       check=True, capture_output=True)
        feed = os.path.join(feed_root, sorted(os.listdir(feed_root))[0])
        lite = os.path.join(work, "s.db")
        r = {"lines": 2 * lines}
        r["ingest_sqlite_seconds"] = timed([ingest, "-q", lite, feed])
        pg = fresh_db(admin, "fdx_load_fdx")
        timed([ingest, "-q", pg, "/dev/null"])  # the tables, outside the measurement
        r["ingest_pg_seconds"] = timed([ingest, "-q", pg, feed])
        r["cells"] = n = int(subprocess.run(
            ["psql", "-qAtX", pg, "-c", "SELECT (SELECT count(*) FROM miss_cell) +"
             " (SELECT count(*) FROM dispatch_cell)"],
            capture_output=True, text=True, check=True).stdout)
        merge = os.path.join(build, "fdx-merge")
        r["merge_sqlite_seconds"] = timed([merge, "-q", os.path.join(work, "m.db"), lite])
        into = fresh_db(admin, "fdx_load_merge")
        timed([ingest, "-q", into, "/dev/null"])
        r["merge_pg_seconds"] = timed([merge, "-q", into, lite])
        try:
            import psycopg2  # noqa: F401
        except ImportError:
            r["row_loop"] = (f"skipped (psycopg2 cannot be imported by {sys.executable}: "
                             "apt-get install python3-psycopg2, and run with /usr/bin/python3)")
        else:
            loop = fresh_db(admin, "fdx_load_loop")
            timed([ingest, "-q", loop, "/dev/null"])
            r["row_loop_seconds"] = row_loop(loop, feed)
        for k in [k for k in r if k.endswith("_seconds")]:
            r[k.replace("_seconds", "_cells_per_s")] = n / r[k]
        return r
    finally:
        if started:
            subprocess.run(["bash", CLUSTER, "stop", state], capture_output=True)
        subprocess.run(["rm", "-rf", work])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--lines", type=int, default=50000)
    ap.add_argument("--cells", type=int, default=20000)
    ap.add_argument("--uri", help="postgresql:// URI of a database to create others from")
    a = ap.parse_args()
    r = measure(a.build, a.lines, a.cells, a.uri)
    n = r["cells"]
    print(f"feed: {r['lines']} lines, {n} distinct cells")
    for key, title in (("ingest_sqlite", "fdx-ingest into SQLite:"),
                       ("ingest_pg", "fdx-ingest into PostgreSQL:"),
                       ("merge_sqlite", "fdx-merge into SQLite:"),
                       ("merge_pg", "fdx-merge into PostgreSQL:")):
        t = r[key + "_seconds"]
        print(f"{title:28s} {t:7.2f} s  {n / t:10.0f} cells/s")
    if "row_loop_seconds" in r:
        t = r["row_loop_seconds"]
        print(f"per-row INSERT ... ON CONFLICT (psycopg2): {t:7.2f} s  {n / t:10.0f} cells/s  "
              f"(fdx-ingest is {t / r['ingest_pg_seconds']:.1f}x faster)")
    else:
        print("per-row INSERT ... ON CONFLICT loop: " + r["row_loop"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
