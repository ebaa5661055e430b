#!/usr/bin/env python3
"""fdx-merge: five host stores merged in several orders and trees give
byte-identical exports, equal to ingesting every host's feeds into one store;
repeats are no-ops, changed or overlapping sources are refused, and a failed
merge changes nothing.

Usage: merge_test.py FDX_INGEST FDX_EXPORT FDX_MERGE GEN_FEED
"""
import os
import random
import shutil
import sqlite3
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
        # Repeats are no-ops: a store merged before, directly, unchanged.
        for dst, src in ((final, host[2]), (j("tree.db"), j("t01.db"))):
            p = run([merge, dst, src])
            check(p.returncode == 0 and "already merged" in p.stderr, "repeat is a no-op", p.stderr)
        check(exported(final) == want, "repeats changed nothing")
        # A store that only says it holds stores already merged is refused,
        # never skipped: its merged_store rows cannot prove what its cells are.
        p = run([merge, final, j("t01.db")])
        check(p.returncode == 1 and "some stores already merged" in p.stderr
              and "t01.db" in p.stderr and "host0.db" in p.stderr, "claims are no repeat", p.stderr)
        # A source that changed since is refused, and says what to do.
        run([ingest, "-q", host[2], runs[0]])
        p = run([merge, final, host[2]])
        check(p.returncode == 1 and "changed since it was merged" in p.stderr
              and "new store" in p.stderr, "changed source refused", p.stderr)
        p = run([merge, j("tree.db"), j("t234.db")])
        check(p.returncode == 0 and "already merged" in p.stderr,
              "a store holding the old h2 is still a repeat", p.stderr)
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
        identity_checks(ingest, export, merge, tmp, runs, exported)
    return finish("merge")

def identity_checks(ingest, export, merge, tmp, runs, exported):
    """Clones, forged lineage rows and broken sources: a merge never skips
    data on the strength of an identity alone, and every failure says why."""
    j = lambda *p: os.path.join(tmp, *p)

    def sql(db, *stmts):
        con = sqlite3.connect(db)
        try:
            rows = [con.execute(s).fetchall() for s in stmts]
            con.commit()
            return rows[-1]
        finally:
            con.close()

    def refused(args, what, *words):
        target = args[0]
        before = exported(target) if os.path.exists(target) else None
        p = run([merge] + args)
        check(p.returncode == 1 and all(w in p.stderr for w in words)
              and "Sanitizer" not in p.stderr, what, p.stderr)
        after = exported(target) if os.path.exists(target) else None
        check(after == before, f"{what}: the target is unchanged")
        return p

    # A template store with one run, copied twice; each copy gets its own run.
    run([ingest, "-q", j("tmpl.db"), runs[0]])
    for c in ("c1.db", "c2.db"):
        shutil.copyfile(j("tmpl.db"), j(c))
    run([ingest, "-q", j("c1.db"), runs[1]])
    run([ingest, "-q", j("c2.db"), runs[2]])
    ids = [sql(j(c), "SELECT id FROM store_identity")[0][0] for c in ("tmpl.db", "c1.db", "c2.db")]
    check(len(set(ids)) == 3, "a copied store written to gets an identity of its own", ids)
    run([ingest, "-q", j("cl.db"), runs[4]])
    p = refused([j("cl.db"), j("c1.db"), j("c2.db")], "clones of one template",
                "c2.db", "c1.db", "copy", "twice")
    # Each clone alone is fine: its cells are the template's and its own run's.
    for c, r in (("c1.db", 1), ("c2.db", 2)):
        p = run([merge, "-q", j(f"only-{c}"), j(c)])
        check(p.returncode == 0, f"merge {c} alone", p.stderr)
        run([ingest, "-q", j(f"want-{c}"), runs[0]])
        run([ingest, "-q", j(f"want-{c}"), runs[r]])
        check(exported(j(f"only-{c}")) == exported(j(f"want-{c}")), f"{c} alone: every cell")

    # Copies of an empty template share nothing: both merge, totals are exact.
    open(j("empty.jsonl"), "w").close()
    run([ingest, "-q", j("empty.db"), j("empty.jsonl")])
    for c, r in (("e1.db", 1), ("e2.db", 2)):
        shutil.copyfile(j("empty.db"), j(c))
        run([ingest, "-q", j(c), runs[r]])
    p = run([merge, "-q", j("e12.db"), j("e1.db"), j("e2.db")])
    check(p.returncode == 0, "copies of an empty store merge", p.stderr)
    run([ingest, "-q", j("want-e12.db"), runs[1]])
    run([ingest, "-q", j("want-e12.db"), runs[2]])
    check(exported(j("e12.db")) == exported(j("want-e12.db")), "copies of an empty store: totals")

    # Copies written without fdx seeing the copy (same identity, same ledger
    # position, different runs): the ledger digest tells them apart.
    shutil.copyfile(j("c2.db"), j("twin.db"))
    c1_id = sql(j("c1.db"), "SELECT id FROM store_identity")[0][0]
    sql(j("twin.db"), f"UPDATE store_identity SET id = '{c1_id}'", "DELETE FROM merged_store")
    run([merge, "-q", j("tw.db"), j("c1.db")])
    refused([j("tw.db"), j("twin.db")], "same identity and position, other runs",
            "twin.db", "c1.db", "ledger")

    # A snapshot of a live store (.backup) merges read-only; merging it
    # again, or the unchanged live store, is a no-op.
    src = sqlite3.connect(j("c1.db"))
    dst = sqlite3.connect(j("snap.db"))
    src.backup(dst)
    src.close()
    dst.close()
    os.chmod(j("snap.db"), 0o444)
    p = run([merge, "-q", j("fromsnap.db"), j("snap.db")])
    check(p.returncode == 0, "merge a snapshot", p.stderr)
    before = exported(j("fromsnap.db"))
    for again in ("snap.db", "c1.db"):
        p = run([merge, j("fromsnap.db"), j(again)])
        check(p.returncode == 0 and "already merged" in p.stderr, f"re-merge {again}", p.stderr)
    check(exported(j("fromsnap.db")) == before, "re-merging a snapshot changed nothing")
    # A moved store keeps its identity.
    os.rename(j("c1.db"), j("c1-moved.db"))
    run([ingest, "-q", j("c1-moved.db"), runs[5]])
    check(sql(j("c1-moved.db"), "SELECT id FROM store_identity")[0][0] == c1_id,
          "a moved store keeps its identity")

    # A source's merged_store rows naming another store (its identity and
    # ledger position, copied from a store that merged it) never make the
    # merge skip that store.
    run([ingest, "-q", j("hA.db"), runs[6]])
    run([ingest, "-q", j("evil.db"), runs[7]])
    run([merge, "-q", j("seen-hA.db"), j("hA.db")])
    row = sql(j("seen-hA.db"), "SELECT * FROM merged_store")[0]
    cols = ",".join("?" * len(row))
    con = sqlite3.connect(j("evil.db"))
    con.execute(f"INSERT INTO merged_store VALUES ({cols})", row)
    con.commit()
    con.close()
    run([ingest, "-q", j("fl.db"), runs[8]])
    refused([j("fl.db"), j("evil.db"), j("hA.db")], "a forged merged_store row",
            "hA.db", "evil.db")
    refused([j("fl.db"), j("hA.db"), j("evil.db")], "a forged merged_store row, other order",
            "hA.db", "evil.db")

    # A merge target that is a copy of a store gets an identity of its own on
    # its first write, and knows it holds that store's cells.
    shutil.copyfile(j("fl.db"), j("fl-copy.db"))
    refused([j("fl-copy.db"), j("fl.db")], "merge a store into its copy", "fl.db", "copy", "twice")
    # A repeat recorded by an older fdx (no ledger digest) proves nothing.
    run([merge, "-q", j("legacy.db"), j("hA.db")])
    sql(j("legacy.db"), "UPDATE merged_store SET ledger_digest = NULL, how = NULL")
    refused([j("legacy.db"), j("hA.db")], "a repeat recorded by an older fdx", "hA.db", "older fdx")

    # A source whose tables are broken: a message naming it and the table.
    run([ingest, "-q", j("fb.db"), runs[8]])
    shutil.copyfile(j("hA.db"), j("broken.db"))
    sql(j("broken.db"), "DROP TABLE miss_cell")
    refused([j("fb.db"), j("broken.db")], "a source without miss_cell", "broken.db", "miss_cell")
    shutil.copyfile(j("hA.db"), j("noledger.db"))
    sql(j("noledger.db"), "DROP TABLE ingest_source", "DROP TABLE ingest_ledger")
    refused([j("fb.db"), j("noledger.db")], "a source without a ledger", "noledger.db",
            "ingest_ledger")
    shutil.copyfile(j("hA.db"), j("noid.db"))
    sql(j("noid.db"), "DELETE FROM store_identity")
    refused([j("fb.db"), j("noid.db")], "a source without an identity", "noid.db", "identity")


if __name__ == "__main__":
    sys.exit(main())
