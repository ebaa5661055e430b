#!/usr/bin/env python3
"""fdx-merge: five host stores merged in several orders and trees give
byte-identical exports, equal to ingesting every host's feeds into one store;
repeats are no-ops, changed or overlapping sources are refused, and a failed
merge changes nothing.

Usage: merge_test.py FDX_INGEST FDX_EXPORT FDX_MERGE GEN_FEED
"""
import os
import random
import subprocess
import sys
import tempfile
import time

from testlib import check, finish, run

def main():
    ingest, export, merge, gen = sys.argv[1:5]
    hosts = 5
    with tempfile.TemporaryDirectory(prefix="fdx-merge-") as tmp:
        j = lambda *p: os.path.join(tmp, *p)

        def exported(db):
            out = j("x-" + os.path.basename(db))
            p = run([export, db, out])
            check(p.returncode == 0, f"export {db}", p.stderr)
            return tuple(open(os.path.join(out, n), "rb").read()
                         for n in ("misses.jsonl", "dispatches.jsonl"))

        # Every host sees the same cells (same --seed) in its own proportions.
        runs = []
        for h in range(hosts):
            subprocess.run([sys.executable, gen, j(f"feeds{h}"), "--runs", "3", "--lines", "150",
                            "--cells", "40", "--candidates", "0.5", "--seed", "9",
                            "--sample-seed", str(100 + h)], check=True)
            for r in range(3):
                run_dir = j(f"feeds{h}", f"run_{r:04d}")
                p = run([ingest, "-q", j(f"host{h}.db"), run_dir])
                check(p.returncode == 0, f"ingest host {h}", p.stderr)
                runs.append(run_dir)
                time.sleep(0.003)  # candidates set in distinct milliseconds
        for run_dir in runs:  # the same feeds, in the same order, into one store
            run([ingest, "-q", j("all.db"), run_dir])
        want = exported(j("all.db"))
        host = [j(f"host{h}.db") for h in range(hosts)]

        orders = {"in order": host, "reversed": host[::-1],
                  "shuffled": random.Random(3).sample(host, hosts)}
        for name, order in orders.items():
            db = j(f"m-{name.replace(' ', '-')}.db")
            p = run([merge, db] + order)
            check(p.returncode == 0, f"merge {name}", p.stderr)
            check(exported(db) == want, f"merge {name} equals one store of every feed")
        # One source per invocation.
        for src in random.Random(5).sample(host, hosts):
            check(run([merge, "-q", j("m-one-by-one.db"), src]).returncode == 0, "merge one")
        check(exported(j("m-one-by-one.db")) == want, "merge one by one")
        # A tree: (h0 h1) and (h4 h2 h3), then the two together.
        check(run([merge, "-q", j("t01.db"), host[0], host[1]]).returncode == 0, "tree 01")
        check(run([merge, "-q", j("t234.db"), host[4], host[2], host[3]]).returncode == 0,
              "tree 234")
        check(run([merge, "-q", j("tree.db"), j("t234.db"), j("t01.db")]).returncode == 0, "tree")
        check(exported(j("tree.db")) == want, "merge tree equals one store of every feed")
        # Merged into a store that already has data of its own.
        run([merge, "-q", j("mixed.db"), host[0], host[1]])
        check(run([merge, "-q", j("mixed.db"), j("t234.db")]).returncode == 0, "merge a merge")
        check(exported(j("mixed.db")) == want, "merge of a merged store")

        final = j("m-in-order.db")
        # Repeats are no-ops, directly or through a store that holds them.
        for src in (host[2], j("t01.db")):
            p = run([merge, final, src])
            check(p.returncode == 0 and "already merged" in p.stderr, "repeat is a no-op", p.stderr)
        check(exported(final) == want, "repeats changed nothing")
        # A source that changed since is refused, and says what to do.
        run([ingest, "-q", host[2], runs[0]])
        p = run([merge, final, host[2]])
        check(p.returncode == 1 and "changed since it was merged" in p.stderr
              and "new store" in p.stderr, "changed source refused", p.stderr)
        p = run([merge, final, j("t234.db")])
        check(p.returncode == 0, "a store holding the old h2 is still a repeat", p.stderr)
        # Partial overlap: a store holding h0 (already merged) and something new.
        run([ingest, "-q", j("fresh.db"), runs[1]])
        run([merge, "-q", j("partial.db"), host[0], j("fresh.db")])
        p = run([merge, final, j("partial.db")])
        check(p.returncode == 1 and "some stores already merged" in p.stderr, "partial overlap",
              p.stderr)
        # A store into itself, or into one that holds it.
        check(run([merge, final, final]).returncode == 1, "merge into itself")
        p = run([merge, host[0], final])
        check(p.returncode == 1 and "count them twice" in p.stderr, "merge back", p.stderr)
        check(exported(final) == want, "refused merges changed nothing")
        # All or nothing: a good source and a bad one.
        with open(j("not-a-store.db"), "w") as f:
            f.write("not a database " * 50)
        before = exported(j("fresh.db"))
        p = run([merge, j("fresh.db"), host[3], j("not-a-store.db")])
        check(p.returncode == 1 and "not an fdx store" in p.stderr, "bad source", p.stderr)
        check(exported(j("fresh.db")) == before, "a failed merge changed nothing")
        p = run([merge, j("fresh.db"), j("missing.db")])
        check(p.returncode == 1 and "no such store" in p.stderr, "missing source", p.stderr)
    return finish("merge")


if __name__ == "__main__":
    sys.exit(main())
