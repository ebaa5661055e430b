#!/usr/bin/env python3
"""fdx-merge: five host stores merged in several orders and trees give
byte-identical exports, equal to ingesting every host's feeds into one store;
merges are incremental (a host that gained runs brings the gain, once,
directly or through other stores, copies and cycles included), repeats are
no-ops, a killed merge completes exactly once when run again, and a failed
merge changes nothing.

Usage: merge_test.py FDX_INGEST FDX_EXPORT FDX_MERGE GEN_FEED
"""
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

from testlib import check, finish, run, skip


def history(db):
    """Observations per cell and day (origins summed), as the views show them."""
    con = sqlite3.connect(db)
    try:
        return sorted(con.execute(
            "SELECT 'm', wanted, op, kernel_source, kernel_revision, compute_capability, "
            "hardware_sku, driver_version, dtypes, day, sum(count) FROM miss_daily_by_store "
            "GROUP BY 2, 3, 4, 5, 6, 7, 8, 9, 10 UNION ALL "
            "SELECT 'd', coalesce(structure_key, '<unkeyed>'), op, kernel_source, kernel_revision, compute_capability, "
            "hardware_sku, driver_version, dtypes, day, sum(count) FROM dispatch_daily_by_store "
            "GROUP BY 2, 3, 4, 5, 6, 7, 8, 9, 10").fetchall())
    finally:
        con.close()

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
        # The summary's counts are true: a cell new to the target is added, a
        # cell it has that the source observed too (under an origin new to the
        # target, so it gains) is updated.
        cell_total = lambda db: sum(f.count(b"\n") for f in exported(db))
        p = run([merge, j("counted.db"), host[0]])
        n0 = cell_total(j("counted.db"))
        check(p.returncode == 0 and f"{n0} added, 0 updated" in p.stderr, "first merge counted",
              p.stderr)
        p = run([merge, j("counted.db"), host[1]])
        n01, n1 = cell_total(j("counted.db")), cell_total(host[1])
        check(p.returncode == 0 and f"{n01 - n0} added, {n0 + n1 - n01} updated" in p.stderr,
              "second merge counted", p.stderr)
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
        # Repeats are no-ops: a store merged before, directly, unchanged; the
        # target's file is left byte for byte as it was (a transaction that
        # wrote only a ledger row it removed again rewrote its pages).
        def file_bytes(db):  # an empty companion is no content (a reader may leave one)
            return [open(db + s, "rb").read() if os.path.exists(db + s) else b""
                    for s in ("", "-wal", "-journal")]

        for dst, src in ((final, host[2]), (j("tree.db"), j("t01.db")), (final, final)):
            before = file_bytes(dst)
            p = run([merge, dst, src])
            check(p.returncode == 0 and ("already merged" in p.stderr or "itself" in p.stderr),
                  "repeat is a no-op", p.stderr)
            check(file_bytes(dst) == before, f"a no-op merge leaves {dst} as it was")
        check(exported(final) == want, "repeats changed nothing")
        # A store holding stores already merged (its claims are never a
        # reason to skip it) is read, and brings nothing new.
        p = run([merge, final, j("t01.db")])
        check(p.returncode == 0 and "1 store merged" in p.stderr
              and "0 added, 0 updated" in p.stderr, "a store of stores already merged", p.stderr)
        check(exported(final) == want, "a store of stores already merged adds nothing")

        # A host that gained runs since its merge brings exactly the gain.
        def grown(name, *run_dirs):
            shutil.copyfile(j("all.db"), j(name))
            for r in run_dirs:
                run([ingest, "-q", j(name), r])
            return exported(j(name))

        run([ingest, "-q", host[2], runs[0]])
        want2 = grown("want2.db", runs[0])
        p = run([merge, final, host[2]])
        check(p.returncode == 0 and "1 store merged" in p.stderr, "merge a grown host", p.stderr)
        check(exported(final) == want2, "re-merging a grown host brings its gain once")
        check(history(final) == history(j("want2.db")), "and its daily history")
        for again in range(2):
            p = run([merge, final, host[2]])
            check(p.returncode == 0 and "already merged" in p.stderr, "repeat after a gain", p.stderr)
        check(exported(final) == want2, "repeating it changes nothing")
        # Trees: an old mid store holding the old h2 brings nothing; the grown
        # host merged directly into the fleet later brings its gain.
        p = run([merge, j("tree.db"), j("t234.db")])
        check(p.returncode == 0 and "already merged" in p.stderr, "unchanged mid store", p.stderr)
        check(exported(j("tree.db")) == want, "a mid store with the old h2 adds nothing")
        check(run([merge, "-q", j("tree.db"), host[2]]).returncode == 0, "host into fleet")
        check(exported(j("tree.db")) == want2, "a host merged through a mid store, then directly")
        check(run([merge, "-q", j("t234.db"), host[2]]).returncode == 0, "host into mid store")
        check(run([merge, "-q", j("tree.db"), j("t234.db")]).returncode == 0, "mid store again")
        check(exported(j("tree.db")) == want2, "the grown host through the mid store too")
        # Partial overlap: a store holding h0 (already merged) and something new.
        run([ingest, "-q", j("fresh.db"), runs[1]])
        run([merge, "-q", j("partial.db"), host[0], j("fresh.db")])
        p = run([merge, "-q", final, j("partial.db")])
        check(p.returncode == 0, "partial overlap", p.stderr)
        want3 = grown("want3.db", runs[0], runs[1])
        check(exported(final) == want3, "partial overlap brings only what is new")
        # A store into itself is a no-op; a fleet merged into a host and back
        # does not double.
        p = run([merge, final, final])
        check(p.returncode == 0 and "itself" in p.stderr, "merge into itself", p.stderr)
        # A new store named among its own sources, after one big enough that
        # its first transaction (through a rollback journal) holds the store
        # exclusively: it is itself, not a store locked by another process.
        subprocess.run([sys.executable, gen, j("big-feed"), "--runs", "1", "--lines", "20000",
                        "--cells", "20000", "--seed", "3"], check=True)
        run([ingest, "-q", j("big.db"), j("big-feed", "run_0000")])
        p = run([merge, j("self.db"), j("big.db"), j("self.db")])
        check(p.returncode == 0 and "itself" in p.stderr, "a new store among its own sources",
              p.stderr)
        check(exported(j("self.db")) == exported(j("big.db")),
              "a new store among its own sources holds the other source")
        check(run([merge, "-q", host[0], final]).returncode == 0, "fleet into host")
        check(exported(host[0]) == want3, "a host holding the fleet")
        check(run([merge, "-q", final, host[0]]).returncode == 0, "host back into fleet")
        check(exported(final) == want3 and history(final) == history(j("want3.db")),
              "fleet -> host -> fleet counts nothing twice")
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
        stray_origin_checks(ingest, merge, tmp, runs)
        time_checks(ingest, merge, tmp, runs, exported)
        pruned_copy_checks(ingest, merge, tmp, runs)
        kill_checks(merge, tmp, host, exported)
        full_tmpdir_checks(ingest, merge, gen, tmp, exported)
    return finish("merge")


def stray_origin_checks(ingest, merge, tmp, runs):
    """A target whose history has rows under an origin number it never gave
    (hand-edited or damaged): the number a merge gives next is that one, and
    those rows count as what the target already holds of the new store, as
    the contract's step 4 says, whether or not every staged origin is new."""
    j = lambda *p: os.path.join(tmp, "stray", *p)
    os.makedirs(j())
    for db in ("src.db", "dst.db"):  # the same cells and counts, on one day
        p = run([ingest, "-q", "--at", "2026-09-01", j(db), runs[0]])
        check(p.returncode == 0, f"stray: ingest {db}", p.stderr)
    con = sqlite3.connect(j("dst.db"))
    with con:  # 4 more of each cell under number 1, which no history_origin row has
        con.execute("INSERT INTO cell_history SELECT cell, day, 1, 4 FROM cell_history")
        for t in ("miss_cell", "dispatch_cell"):
            con.execute(f"UPDATE {t} SET count = count + 4")
    p = run([merge, "-q", j("dst.db"), j("src.db")])
    check(p.returncode == 0, "stray: merge", p.stderr)
    rows = con.execute("SELECT o.count, s.count FROM cell_history AS o JOIN cell_history AS s "
                       "ON s.cell = o.cell AND s.day = o.day AND s.origin = 1 "
                       "WHERE o.origin = 0").fetchall()
    con.close()
    check(len(rows) > 0 and all(held == max(own, 4) for own, held in rows),
          "stray: the source's counts meet the rows under the number it was given", str(rows[:5]))


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

    run([ingest, "-q", j("fb.db"), runs[8]])

    def merged(args, what):
        p = run([merge, "-q"] + args)
        check(p.returncode == 0, what, p.stderr)

    def one_store(name, *run_dirs):
        for r in run_dirs:
            run([ingest, "-q", j(name), r])
        return exported(j(name))

    # A template store with one run, copied twice; each copy gets its own run.
    # Both copies merge, and the template's run counts once (the history a
    # copy had when it forked is the template's).
    run([ingest, "-q", j("tmpl.db"), runs[0]])
    for c in ("c1.db", "c2.db"):
        shutil.copyfile(j("tmpl.db"), j(c))
    # (Stores are fed in the order of the store of every feed they are
    # compared with: the latest candidates win.)
    run([ingest, "-q", j("cl.db"), runs[4]])
    run([ingest, "-q", j("c1.db"), runs[1]])
    run([ingest, "-q", j("c2.db"), runs[2]])
    ids = [sql(j(c), "SELECT id FROM store_identity")[0][0] for c in ("tmpl.db", "c1.db", "c2.db")]
    check(len(set(ids)) == 3, "a copied store written to gets an identity of its own", ids)
    merged([j("cl.db"), j("c1.db"), j("c2.db")], "clones of one template")
    check(exported(j("cl.db")) == one_store("want-cl.db", runs[0], runs[4], runs[1], runs[2]),
          "clones fed different runs: one store of every feed")
    merged([j("cl.db"), j("tmpl.db")], "the template too")
    run([ingest, "-q", j("tmpl.db"), runs[3]])
    merged([j("cl.db"), j("tmpl.db"), j("c2.db"), j("c1.db")], "all again, the template grown")
    check(exported(j("cl.db")) == one_store("want-cl.db", runs[3]),
          "clones and their grown template: one store of every feed")
    runs_in = sorted(r[0] for r in sql(j("cl.db"), "SELECT count(*) FROM fleet_ledger "
                                                   "WHERE kind = 'ingest' GROUP BY store, id"))
    check(runs_in and runs_in[-1] == 1, "each ledger row once in fleet_ledger", runs_in)
    for c, r in (("c1.db", 1), ("c2.db", 2)):
        merged([j(f"only-{c}"), j(c)], f"merge {c} alone")
        check(exported(j(f"only-{c}")) == one_store(f"want-{c}", runs[0], runs[r]),
              f"{c} alone: every cell")

    # Copies written without fdx seeing the copy (same identity, same ledger
    # position, different runs): the ledger digest tells them apart, so the
    # second is read, not skipped as a repeat.
    shutil.copyfile(j("c2.db"), j("twin.db"))
    c1_id = sql(j("c1.db"), "SELECT id FROM store_identity")[0][0]
    sql(j("twin.db"), f"UPDATE store_identity SET id = '{c1_id}'", "DELETE FROM merged_store")
    run([merge, "-q", j("tw.db"), j("c1.db")])
    before = exported(j("tw.db"))
    p = run([merge, j("tw.db"), j("twin.db")])
    check(p.returncode == 0 and "1 store merged" in p.stderr,
          "same identity and position, other runs: read", p.stderr)
    check(exported(j("tw.db")) != before, "same identity and position, other runs: its cells")

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
    # A merge with nothing to do into a copy of a store (a restored backup)
    # wrote to it: the copy's first write takes an identity of its own, and
    # that was committed though nothing was merged. The file is left as it was.
    shutil.copyfile(j("fromsnap.db"), j("restored.db"))
    with open(j("restored.db"), "rb") as f:
        image = f.read()
    p = run([merge, j("restored.db"), j("snap.db")])
    check(p.returncode == 0 and "nothing to do" in p.stderr, "a merge into a copy, nothing to do",
          p.stderr)
    with open(j("restored.db"), "rb") as f:
        check(f.read() == image, "a merge with nothing to do left the copied store as it was")
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
    for order in ((j("evil.db"), j("hA.db")), (j("hA.db"), j("evil.db"))):
        name = "fl-" + os.path.basename(order[0])
        run([ingest, "-q", j(name), runs[8]])
        merged([j(name)] + list(order), "a forged merged_store row")
        check(exported(j(name)) == one_store("want-" + name, runs[6], runs[7], runs[8]),
              "a forged merged_store row skips nothing")

    # A merge target that is a copy of a store gets an identity of its own on
    # its first write, and knows it holds that store's cells.
    shutil.copyfile(j("fl-evil.db"), j("fl-copy.db"))
    merged([j("fl-copy.db"), j("fl-evil.db")], "merge a store into its copy")
    check(exported(j("fl-copy.db")) == exported(j("fl-evil.db")),
          "a store merged into its copy adds nothing")
    # A merge recorded by an older fdx (no ledger digest) proves nothing: the
    # store is read again, and brings nothing twice.
    run([merge, "-q", j("legacy.db"), j("hA.db")])
    before = exported(j("legacy.db"))
    sql(j("legacy.db"), "UPDATE merged_store SET ledger_digest = NULL, how = NULL")
    p = run([merge, j("legacy.db"), j("hA.db")])
    check(p.returncode == 0 and "1 store merged" in p.stderr, "an older record", p.stderr)
    check(exported(j("legacy.db")) == before, "an older record: nothing twice")

    # A source whose history does not add up to its cells' counts.
    shutil.copyfile(j("hA.db"), j("nohist.db"))
    sql(j("nohist.db"), "DELETE FROM cell_history WHERE cell = (SELECT min(cell) FROM cell_history)")
    refused([j("fb.db"), j("nohist.db")], "a cell's history short of its count", "nohist.db",
            "does not add up")
    shutil.copyfile(j("hA.db"), j("badorigin.db"))
    sql(j("badorigin.db"), "INSERT INTO history_origin VALUES (5, 'not an identity')")
    refused([j("fb.db"), j("badorigin.db")], "a malformed origin", "badorigin.db", "history_origin")

    # A source whose tables are broken: a message naming it and the table.
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


def time_checks(ingest, merge, tmp, runs, exported):
    """Month buckets against days, and prunes: a merge compares a month's
    counts when either side keeps it as one bucket, and a fleet's prune is not
    undone by a later merge of a host merged before it."""
    j = lambda *p: os.path.join(tmp, *p)
    prune = os.path.join(os.path.dirname(merge), "fdx-prune")

    def feed(db, at, run_dir, *opts):
        p = run([ingest, "-q", "--at", at] + list(opts) + [j(db), run_dir])
        check(p.returncode == 0, f"ingest {db} at {at}", p.stderr)

    def merged(target, *sources):
        p = run([merge, "-q", j(target)] + [j(s) for s in sources])
        check(p.returncode == 0, f"merge into {target}", p.stderr)

    # The host keeps 10 days daily: its June becomes a month bucket after its
    # first merge, then a backfill adds to it. The fleet (90 days) must gain
    # the backfill alone.
    feed("g-host.db", "2026-06-15", runs[0], "--daily-days", "10")
    merged("g-fleet.db", "g-host.db")
    feed("g-host.db", "2026-10-01", runs[1])
    feed("g-host.db", "2026-06-20", runs[2])
    merged("g-fleet.db", "g-host.db")
    for at, r in (("2026-06-15", 0), ("2026-10-01", 1), ("2026-06-20", 2)):
        feed("g-want.db", at, runs[r])
    check(exported(j("g-fleet.db")) == exported(j("g-want.db"))
          and history(j("g-fleet.db")) == history(j("g-want.db")),
          "a host's month bucket against the fleet's days: the backfill counts once")
    # The other way round: the fleet keeps 10 days, the host 200 (its June
    # stays days).
    feed("g-fleet2.db", "2026-06-01", "/dev/null", "--daily-days", "10")
    feed("g-host2.db", "2026-06-15", runs[0], "--daily-days", "200")
    feed("g-host2.db", "2026-10-01", runs[1])
    merged("g-fleet2.db", "g-host2.db")
    feed("g-host2.db", "2026-06-20", runs[2])
    merged("g-fleet2.db", "g-host2.db")
    feed("g-want2.db", "2026-06-01", "/dev/null", "--daily-days", "10")
    for at, r in (("2026-06-15", 0), ("2026-10-01", 1), ("2026-06-20", 2)):
        feed("g-want2.db", at, runs[r])
    check(exported(j("g-fleet2.db")) == exported(j("g-want2.db"))
          and history(j("g-fleet2.db")) == history(j("g-want2.db")),
          "a host's days against the fleet's month bucket: the backfill counts once")
    con = sqlite3.connect(j("g-host2.db"))
    days = con.execute("SELECT count(DISTINCT day) FROM cell_history").fetchone()[0]
    con.close()
    check(days == 3, "the host kept its June days", days)

    # A fleet prune stays: the host merged before it brings only what it
    # observed after, directly or through a mid store.
    feed("p-host.db", "2026-10-01", runs[0])
    merged("p-fleet.db", "p-host.db")
    con = sqlite3.connect(j("p-fleet.db"))
    op = con.execute("SELECT op FROM miss_cell ORDER BY count DESC LIMIT 1").fetchone()[0]
    con.close()
    for db in ("p-fleet.db", "p-want.db"):
        if db == "p-want.db":
            feed(db, "2026-10-01", runs[0])
        p = run([prune, "-q", j(db), "--op", op])
        check(p.returncode == 0, f"prune {db}", p.stderr)
    feed("p-host.db", "2026-10-01", runs[1])
    feed("p-want.db", "2026-10-01", runs[1])
    merged("p-fleet.db", "p-host.db")
    want = exported(j("p-want.db"))
    check(exported(j("p-fleet.db")) == want, "a fleet prune is not undone by a re-merge")
    merged("p-mid.db", "p-host.db")
    merged("p-fleet.db", "p-mid.db", "p-host.db")
    check(exported(j("p-fleet.db")) == want, "nor by a mid store holding the host")
    con = sqlite3.connect(j("p-fleet.db"))
    tombs = con.execute("SELECT count(*) FROM pruned_cell WHERE op = ?", (op,)).fetchone()[0]
    con.close()
    check(tombs > 0, "the pruned cells are remembered", tombs)
    # A prune on the host: the fleet keeps what it merged before.
    p = run([prune, "-q", j("p-host.db"), "--op", op])
    check(p.returncode == 0, "prune the host", p.stderr)
    merged("p-fleet.db", "p-host.db")
    check(exported(j("p-fleet.db")) == want, "a host's prune does not shrink the fleet")
    # The host observes the cells it pruned again, on the same day: the fleet
    # gains all of it, though it already holds more of that day than the
    # host's live cells do (the host's counts of the key are its pruned ones
    # plus these), directly, through a mid store, and once.
    feed("p-host.db", "2026-10-01", runs[2])
    feed("p-want.db", "2026-10-01", runs[2])
    merged("p-fleet.db", "p-host.db")
    want = exported(j("p-want.db"))
    check(exported(j("p-fleet.db")) == want
          and history(j("p-fleet.db")) == history(j("p-want.db")),
          "a host's cells pruned and observed again: the fleet gains the new observations")
    merged("p-fleet.db", "p-host.db")
    merged("p-mid2.db", "p-host.db")
    merged("p-fleet.db", "p-mid2.db")
    check(exported(j("p-fleet.db")) == want, "once, directly or through a mid store")
    merged("p-host.db", "p-fleet.db")
    con = sqlite3.connect(j("p-host.db"))
    n = con.execute("SELECT sum(count) FROM miss_cell WHERE op = ?", (op,)).fetchone()[0]
    con.close()
    feed("p-want2.db", "2026-10-01", runs[2])
    con = sqlite3.connect(j("p-want2.db"))
    want_n = con.execute("SELECT sum(count) FROM miss_cell WHERE op = ?", (op,)).fetchone()[0]
    con.close()
    check(n == want_n, "the fleet merged back gives the host nothing it pruned", (n, want_n))


def pruned_copy_checks(ingest, merge, tmp, runs):
    """A copy of a store whose cells were all pruned still holds its runs: the
    copy's first write records the store it came from, so that a fleet
    merging both lists each run once, under the store that ingested it."""
    j = lambda *p: os.path.join(tmp, *p)
    prune = os.path.join(os.path.dirname(merge), "fdx-prune")
    for args in (["--run-id", "pc-host-a", j("pc-host.db"), runs[0]],
                 ["--run-id", "pc-host-b", j("pc-host.db"), runs[1]]):
        p = run([ingest, "-q"] + args)
        check(p.returncode == 0, f"ingest {args[1]}", p.stderr)
    p = run([prune, "-q", "--before", "2100-01-01", j("pc-host.db")])
    check(p.returncode == 0, "prune every cell of the host", p.stderr)
    shutil.copyfile(j("pc-host.db"), j("pc-copy.db"))
    p = run([ingest, "-q", "--run-id", "pc-copy-c", j("pc-copy.db"), runs[2]])
    check(p.returncode == 0, "ingest into the copy", p.stderr)
    # The fleet merged back into the copy: the original's runs it holds from
    # the copy are not listed again under the original's identity.
    for dst, srcs, what in (
            ("pc-fleet.db", ("pc-host.db", "pc-copy.db"),
             "a fleet lists a pruned store's runs once, though a copy of it holds them"),
            ("pc-copy.db", ("pc-fleet.db",),
             "a copy that merged the fleet back lists its original's runs once")):
        p = run([merge, "-q", j(dst)] + [j(s) for s in srcs])
        check(p.returncode == 0, f"merge {' '.join(srcs)} into {dst}", p.stderr)
        con = sqlite3.connect(j(dst))
        ids = sorted(r[0] for r in con.execute("SELECT run_id FROM fleet_ledger WHERE run_id "
                                               "IS NOT NULL"))
        con.close()
        check(ids == ["pc-copy-c", "pc-host-a", "pc-host-b"], what, ids)


def kill_checks(merge, tmp, host, exported):
    """A merge killed at any point leaves the target before or after it, and
    running it again completes it exactly once."""
    j = lambda *p: os.path.join(tmp, *p)
    shim = os.environ.get("FDX_FAULT_SHIM")
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") +
               ":verify_asan_link_order=0")
    if shim and os.path.exists(shim):
        env["LD_PRELOAD"] = shim
    run([merge, "-q", j("k-base.db"), host[1]])
    before = exported(j("k-base.db"))
    shutil.copyfile(j("k-base.db"), j("k-after.db"))
    sources = [host[2], host[3], host[4]]
    run([merge, "-q", j("k-after.db")] + sources)
    after = exported(j("k-after.db"))
    check(before != after, "the merge to kill changes the target")
    # SQLite syncs with fdatasync: a kill at each of a merge's syncs (the
    # last cases outnumber them, and let it finish).
    cases = [("FDX_KILL_AT_FDATASYNC", str(n)) for n in range(1, 9)] if "LD_PRELOAD" in env else []
    if not cases:
        skip(8, "merge kills at exact steps: FDX_FAULT_SHIM does not name the fault shim")
    killed = 0
    rng = random.Random(11)
    for var, n in cases + [(None, None)] * 3:
        work = j("k-work.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(work + suffix):
                os.remove(work + suffix)
        shutil.copyfile(j("k-base.db"), work)
        cmd = [merge, "-q", work] + sources
        if var:
            p = subprocess.run(cmd, env=dict(env, **{var: n}), capture_output=True)
            killed += p.returncode == -signal.SIGKILL
            what = f"merge killed at fdatasync {n}"
        else:
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, 0.05))
            p.kill()
            p.wait()
            what = "merge killed at a random moment"
        con = sqlite3.connect(work)
        ok = con.execute("PRAGMA integrity_check").fetchone()[0]
        con.close()
        check(ok == "ok", f"{what}: integrity", ok)
        check(exported(work) in (before, after), f"{what}: before or after")
        p = run([merge, "-q", work] + sources)
        check(p.returncode == 0 and exported(work) == after,
              f"{what}: running it again completes it once", p.stderr)
    if cases:
        check(4 <= killed < len(cases), "the merge was killed at its syncs, and then finished",
              killed)


def full_tmpdir_checks(ingest, merge, gen, tmp, exported):
    """$TMPDIR filling up at any write of a merge's staging (the TEMP
    database, which commits after the store): the merge either completes or
    fails naming the full disk with the target unchanged, and leaves $TMPDIR
    empty. The staging here outgrows SQLite's page cache, so its pages are
    written while the merge runs and again as the transaction commits."""
    j = lambda *p: os.path.join(tmp, *p)
    shim = os.environ.get("FDX_FAULT_SHIM")
    if not shim or not os.path.exists(shim):
        skip(1, "a full $TMPDIR at each write: FDX_FAULT_SHIM does not name the fault shim")
        return
    for name, seed in (("f-src", "21"), ("f-tgt", "22")):
        subprocess.run([sys.executable, gen, j(name), "--runs", "1", "--lines", "12000",
                        "--cells", "12000", "--candidates", "0.3", "--seed", "20",
                        "--sample-seed", seed], check=True)
        p = run([ingest, "-q", j(name + ".db"), j(name, "run_0000")])
        check(p.returncode == 0, f"ingest {name}", p.stderr)
    full = j("full-tmp")
    os.mkdir(full)
    log = j("full.log")
    env = dict(os.environ, LD_PRELOAD=shim, FDX_FULL_UNDER=full, FDX_SYNC_LOG=log,
               TMPDIR=full, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") +
               ":verify_asan_link_order=0")

    def merge_once(at):
        work = j("f-work.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(work + suffix):
                os.remove(work + suffix)
        shutil.copyfile(j("f-tgt.db"), work)
        if os.path.exists(log):
            os.remove(log)
        p = subprocess.run([merge, "-q", work, j("f-src.db")], capture_output=True, text=True,
                           env=dict(env, FDX_FULL_AT=str(at)))
        writes = [int(line.split()[1]) for line in open(log) if line.startswith("writes ")]
        return p, exported(work), writes[-1] if writes else 0

    before = exported(j("f-tgt.db"))
    p, after, total = merge_once(0)
    check(p.returncode == 0 and after != before, "the merge to fill $TMPDIR under", p.stderr)
    check(total > 100, "the merge writes its staging under $TMPDIR", total)
    # Every one of the last writes (the commit's), and a spread of the others.
    ats = sorted(set(range(max(1, total - 23), total + 1)) |
                 set(range(1, total, max(1, total // 12))))
    failed = 0
    for at in ats:
        p, got, _ = merge_once(at)
        what = f"$TMPDIR full from its write {at} of {total}"
        if p.returncode == 0:
            check(got == after, f"{what}: a merge that succeeds is complete")
        else:
            failed += 1
            check(p.returncode == 1 and "full" in p.stderr, f"{what}: fails naming it", p.stderr)
            check(got == before, f"{what}: a failed merge changed nothing", p.stderr)
        check(os.listdir(full) == [], f"{what}: $TMPDIR left empty", os.listdir(full))
    check(failed >= len(ats) // 2, "most of the full writes failed the merge", failed)


if __name__ == "__main__":
    sys.exit(main())
