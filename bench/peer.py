#!/usr/bin/env python3
"""The peer: the same ingest written the way a user would without fdx. A short
script with json and sqlite3, one transaction, executemany upserts with
count = count + excluded.count.

Usage: peer.py DB RUN_DIR_OR_FILE...
"""
import json
import os
import sqlite3
import sys


def lines(paths):
    for p in paths:
        files = [os.path.join(p, n) for n in ("misses.jsonl", "dispatches.jsonl")] \
            if os.path.isdir(p) else [p]
        for f in files:
            if os.path.exists(f):
                with open(f, encoding="utf-8") as fh:
                    yield from fh


def impl(i):
    return (i["backend"], i["op"], json.dumps(i["dtypes"]), i["kernel_source"],
            str(i["kernel_revision_hash"]))


def hw(h):
    cc = h.get("compute_capability")
    return (json.dumps(cc), h["hardware_sku"], h["driver_version"])


def main():
    db = sqlite3.connect(sys.argv[1])
    db.executescript("""
        CREATE TABLE IF NOT EXISTS misses (wanted, backend, op, dtypes, source, revision, cc,
            sku, driver, count, PRIMARY KEY (wanted, backend, op, dtypes, source, revision, cc,
            sku, driver));
        CREATE TABLE IF NOT EXISTS dispatches (key, backend, op, dtypes, source, revision, cc,
            sku, driver, candidates, count, PRIMARY KEY (key, backend, op, dtypes, source,
            revision, cc, sku, driver));
    """)
    misses, dispatches = [], []
    for line in lines(sys.argv[2:]):
        if not line.strip():
            continue
        r = json.loads(line)
        if "wanted" in r:
            misses.append((r["wanted"],) + impl(r["fallback"]) + hw(r["hw"]) + (max(r["count"], 1),))
        else:
            dispatches.append((r.get("structure_key"),) + impl(r["chosen"]) + hw(r["hw"])
                              + (json.dumps(r.get("candidates") or []), max(r["count"], 1)))
    with db:
        db.executemany("INSERT INTO misses VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO UPDATE "
                       "SET count = count + excluded.count", misses)
        db.executemany("INSERT INTO dispatches VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO "
                       "UPDATE SET count = count + excluded.count, candidates = CASE WHEN "
                       "excluded.candidates = '[]' THEN candidates ELSE excluded.candidates END",
                       dispatches)
    db.close()


if __name__ == "__main__":
    main()
