#!/usr/bin/env python3
"""Model test of the time axis and of incremental merges: rounds of random
ingests on random days (backfills included) into host stores with random
daily windows, copies of stores (cp) fed their own runs, random prunes of
hosts and of the fleet, and merges in random trees in random order, hosts
merged again after they grew, and the fleet merged back into hosts, must
leave in every store the per-origin history, window rankings, growth
rankings and totals that a model computes. The model keeps, per (cell,
origin store, bucket), a grow-only count, and a merge keeps the larger of
two (README: "how a merge knows what it holds"). Without prunes, the fleet
that merged every store at the end must also hold exactly the observations
of every feed once (counted by event, so copies share their original's).

Usage: history_model_test.py BUILD_DIR [SEEDS]
"""
import datetime
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from testlib import check, finish

COUNT_MAX = 2**63 - 1
EPOCH = datetime.date(1970, 1, 1)
DAY0 = (datetime.date(2026, 9, 1) - EPOCH).days
CCS = [None, [8, 9], [9, 0], [10, 0], [12, 0]]


def date_of(day):
    return (EPOCH + datetime.timedelta(days=day)).isoformat()


def month_start(day):
    d = EPOCH + datetime.timedelta(days=day)
    return (d.replace(day=1) - EPOCH).days


def month_end(day):
    """The last day of the month of a month bucket's first day."""
    return month_start(day + 31) - 1


def sat(n):
    return min(n, COUNT_MAX)


class Store:
    """What a store's history should hold: counts per (cell, origin, bucket),
    origin being the identity of the store that observed them, and the counts
    of the cells it pruned (the same keys)."""

    def __init__(self, daily_days=90):
        self.daily_days = daily_days
        self.rolled_before = -2**31
        self.latest = None
        self.rows = {}   # (cell, origin, day) -> count
        self.tombs = {}  # (cell, origin, day) -> count
        self.id = None   # the store's identity, read back after each write
        self.events = set()  # the feed events it holds (see main's docstring)

    def copy(self):
        other = Store(self.daily_days)
        other.rolled_before, other.latest, other.id = self.rolled_before, self.latest, self.id
        other.rows, other.tombs, other.events = dict(self.rows), dict(self.tombs), set(self.events)
        return other

    def bucket(self, day):
        return month_start(day) if day < self.rolled_before else day

    def add(self, cell, origin, day, count):
        key = (cell, origin, self.bucket(day))
        self.rows[key] = sat(self.rows.get(key, 0) + count)
        self.latest = day if self.latest is None else max(self.latest, day)

    def commit(self):
        if self.latest is None:
            return
        # never counted back from past tomorrow: a capture time in the future
        # does not roll the days before it into months
        tomorrow = (datetime.datetime.now(datetime.timezone.utc).date() - EPOCH).days + 1
        keep_from = month_start(min(self.latest, tomorrow) - self.daily_days + 1)
        if keep_from <= self.rolled_before:
            return
        rolled = {}
        for (cell, origin, day), n in self.rows.items():
            if self.rolled_before <= day < keep_from:
                day = month_start(day)
            rolled[(cell, origin, day)] = sat(rolled.get((cell, origin, day), 0) + n)
        self.rows = rolled
        self.rolled_before = keep_from

    def prune(self, pred, before=None):
        """Removes the cells pred accepts (and, with before, not seen since
        that day, a month bucket counting as seen through its last day);
        their counts become tombstones."""
        seen = {}
        for (cell, _, day) in self.rows:
            last = day if day >= self.rolled_before else month_end(day)
            seen[cell] = max(seen.get(cell, last), last)
        gone = {c for c in seen if pred(c) and (before is None or seen[c] < before)}
        for key, n in self.rows.items():
            if key[0] in gone:
                self.tombs[key] = sat(self.tombs.get(key, 0) + n)
        self.rows = {k: n for k, n in self.rows.items() if k[0] not in gone}
        return bool(gone)

    def merge_from(self, src):
        """A merge of src (inside the transaction: no roll-up until commit)."""
        if src.id == self.id:
            return
        self.events |= src.events
        coarse = max(self.rolled_before, src.rolled_before)
        mine = {}
        for table in (self.rows, self.tombs):
            for (cell, origin, day), n in table.items():
                mine[(cell, origin, day)] = sat(mine.get((cell, origin, day), 0) + n)
        # what src observed of a key it holds: its live rows, plus the rows
        # it pruned of that key before observing it again
        live = {cell for (cell, _, _) in src.rows}
        theirs = dict(src.rows)
        for (cell, origin, day), n in src.tombs.items():
            if cell in live:
                theirs[(cell, origin, day)] = sat(theirs.get((cell, origin, day), 0) + n)
        sm, tm, days = {}, {}, {}
        for (cell, origin, day), n in theirs.items():
            k = (cell, origin, month_start(day))
            sm[k] = sat(sm.get(k, 0) + n)
            days.setdefault(k, []).append(day)
        for (cell, origin, day), n in mine.items():
            k = (cell, origin, month_start(day))
            if k in sm:
                tm[k] = sat(tm.get(k, 0) + n)
        for k in sorted(sm):
            gain = sm[k] - tm.get(k, 0)
            if gain <= 0:
                continue
            cell, origin, month = k
            spread = {}
            if month >= coarse:
                for day in days[k]:
                    d = theirs[(cell, origin, day)] - mine.get((cell, origin, day), 0)
                    if d > 0:
                        spread[day] = d
            if not spread or sat(sum(spread.values())) != gain:
                spread = {month: gain}
            for day, d in spread.items():
                self.rows[(cell, origin, day)] = sat(self.rows.get((cell, origin, day), 0) + d)
                self.latest = day if self.latest is None else max(self.latest, day)

    def by_day(self):
        out = {}
        for (cell, _, day), n in self.rows.items():
            out[(cell, day)] = sat(out.get((cell, day), 0) + n)
        return out

    def totals(self):
        out = {}
        for (cell, _, _), n in self.rows.items():
            out[cell] = sat(out.get(cell, 0) + n)
        return out


def gen_records(rng, huge):
    """A run's records and the cells they add to: cell = (kind, key...)."""
    lines, adds = [], []
    for _ in range(rng.randrange(1, 12)):
        cc = rng.choice(CCS)
        hw = {"hardware_sku": rng.choice(["sku-a", "sku-b"]), "driver_version": "d1"}
        if cc:
            hw["compute_capability"] = cc
        count = rng.choice([COUNT_MAX, 2**62, 5]) if huge and rng.random() < 0.3 else \
            rng.randrange(0, 30)
        impl = {"backend": "Cuda", "op": rng.choice(["MatMul", "Gelu"]), "dtypes": ["F16"],
                "kernel_source": rng.choice(["k1", "k2"]), "kernel_revision_hash": rng.choice([1, 2])}
        ccm = tuple(cc) if cc else (-1, -1)
        if rng.random() < 0.7:
            wanted = rng.choice(["w1", "w2", "w3", "w4", "w5"])
            lines.append({"schema": 2, "wanted": wanted, "fallback": impl, "count": count, "hw": hw})
            cell = ("miss", wanted, impl["op"], impl["kernel_source"], impl["kernel_revision_hash"],
                    ccm, hw["hardware_sku"])
        else:
            key = rng.choice(["s1", "s2"])
            lines.append({"schema": 2, "structure_key": key, "chosen": impl, "count": count,
                          "hw": hw})
            cell = ("dispatch", key, impl["op"], impl["kernel_source"],
                    impl["kernel_revision_hash"], ccm, hw["hardware_sku"])
        adds.append((cell, max(count, 1)))
    return lines, adds


def read_rows(db):
    con = sqlite3.connect(db)
    rows = {}
    for kind, view, key in (("miss", "miss_daily_by_store", "wanted"),
                            ("dispatch", "dispatch_daily_by_store", "structure_key")):
        for r in con.execute(f"SELECT {key}, op, kernel_source, kernel_revision, cc_major, "
                             f"cc_minor, hardware_sku, store, day, count FROM {view}"):
            cell = (kind, r[0], r[1], r[2], int(r[3], 16), (r[4], r[5]), r[6])
            day = (datetime.date.fromisoformat(r[8]) - EPOCH).days
            rows[(cell, r[7], day)] = r[9]
    totals = {}
    for kind, view, key in (("miss", "miss_cells", "wanted"),
                            ("dispatch", "dispatch_cells", "structure_key")):
        for r in con.execute(f"SELECT {key}, op, kernel_source, kernel_revision, cc_major, "
                             f"cc_minor, hardware_sku, count FROM {view}"):
            totals[("miss" if kind == "miss" else "dispatch", r[0], r[1], r[2], int(r[3], 16),
                    (r[4], r[5]), r[6])] = r[7]
    con.close()
    return rows, totals


def store_id(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT id FROM store_identity").fetchone()[0]
    finally:
        con.close()


def top(build, db, args):
    p = subprocess.run([os.path.join(build, "fdx-top"), "--json", "-n", "0", db] + args,
                       capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else p.stderr


def check_store(build, rng, name, db, model, huge):
    rows, totals = read_rows(db)
    check(rows == model.rows, f"{name}: history per origin", f"{sorted(rows.items())}\n"
          f"want {sorted(model.rows.items())}")
    check(totals == model.totals(), f"{name}: totals are the history's sums",
          f"{totals}\nwant {model.totals()}")
    if huge or model.latest is None:
        return
    misses = [(c, d, n) for (c, d), n in model.by_day().items() if c[0] == "miss"]
    for _ in range(3):
        lo = DAY0 + rng.randrange(-5, 130)
        hi = lo + rng.randrange(1, 60)
        args = ["--since", date_of(lo)] + (["--until", date_of(hi)] if rng.random() < 0.7 else [])
        if len(args) == 2:
            hi = 10**9
        want = {}
        for c, d, n in misses:
            if lo <= d < hi:
                want[c[1]] = want.get(c[1], 0) + n
        want = sorted(want.items(), key=lambda kv: (-kv[1], kv[0]))
        got = top(build, db, args)
        check(isinstance(got, list) and [(r["wanted"], r["misses"]) for r in got] == want,
              f"{name}: fdx-top {' '.join(args)}", f"{got}\nwant {want}")
    for _ in range(2):
        days = rng.randrange(1, 30)
        args = ["--growth", f"{days}d"]
        end = model.latest + 1
        if rng.random() < 0.5:
            end = DAY0 + rng.randrange(0, 130)
            args += ["--until", date_of(end)]
        lo = end - days
        per = {}
        for c, d, n in misses:
            if d >= end:
                continue
            p = per.setdefault(c[1], [0, 0, 0])
            if d >= lo:
                p[0] += n
            elif d >= lo - days:
                p[1] += n
            if d < lo:
                p[2] += n
        want = sorted(((w, m, p, m - p, b == 0) for w, (m, p, b) in per.items() if m or p),
                      key=lambda r: (-r[3], -r[1], r[0]))
        got = top(build, db, args)
        check(isinstance(got, list) and
              [(r["wanted"], r["misses"], r["previous"], r["growth"], r["new"]) for r in got] == want,
              f"{name}: fdx-top {' '.join(args)}", f"{got}\nwant {want}")


def random_prune(rng):
    """fdx-prune arguments and the cells they select in the model."""
    r = rng.randrange(5)
    if r == 0:
        op = rng.choice(["MatMul", "Gelu"])
        return ["--op", op], (lambda c: c[2] == op), None
    if r == 1:
        cc = rng.choice(CCS)
        text = "cpu" if cc is None else f"{cc[0]}.{cc[1]}"
        want = (-1, -1) if cc is None else tuple(cc)
        return ["--cc", text], (lambda c: c[5] == want), None
    if r == 2:
        rev = rng.choice([1, 2])
        return ["--revision", f"{rev:016X}"], (lambda c: c[4] == rev), None
    if r == 3:
        src = rng.choice(["k1", "k2"])
        return ["--source", src, "--sku", "sku-a"], (lambda c: c[3] == src and c[6] == "sku-a"), None
    day = DAY0 + rng.randrange(0, 130)
    return ["--before", date_of(day)], (lambda c: True), day


def prune(build, rng, name, db, model):
    args, pred, before = random_prune(rng)
    p = subprocess.run([os.path.join(build, "fdx-prune"), "-q", db] + args, capture_output=True,
                       text=True)
    check(p.returncode == 0, f"{name}: fdx-prune {' '.join(args)}", p.stderr)
    model.prune(pred, before)
    model.id = store_id(db)
    return args


def merge_tree(rng, items):
    """Groups items into a random tree: a leaf is an item, a node a list."""
    if len(items) == 1:
        return items[0]
    rng.shuffle(items)
    cuts = sorted(rng.sample(range(1, len(items)), rng.randrange(1, len(items))))
    groups, prev = [], 0
    for c in cuts + [len(items)]:
        groups.append(items[prev:c])
        prev = c
    return [merge_tree(rng, g) for g in groups]


class Seed:
    """One seed's stores: name -> (path, model)."""

    def __init__(self, build, seed, tmp):
        self.build, self.seed, self.tmp = build, seed, tmp
        self.rng = random.Random(seed)
        self.huge = seed % 7 == 3
        self.stores = {}
        self.runs = 0
        self.events = 0
        self.run_ids = []
        self.pruned = False
        self.may_prune = seed % 3 != 0  # a third of the seeds never prune

    def path(self, name):
        return os.path.join(self.tmp, f"{self.seed}-{name}.db")

    def tool(self, name, args, what):
        p = subprocess.run([os.path.join(self.build, name), "-q"] + args, capture_output=True,
                           text=True)
        check(p.returncode == 0, f"seed {self.seed}: {what}", p.stderr)

    def new_store(self, name, daily_days):
        model = Store(daily_days)
        db = self.path(name)
        args = ["--daily-days", str(daily_days)] if daily_days != 90 else []
        self.tool("fdx-ingest", args + [db, "/dev/null"], f"create {name}")
        model.id = store_id(db)
        self.stores[name] = (db, model)

    def ingest(self, name):
        db, model = self.stores[name]
        rng = self.rng
        lines, adds = gen_records(rng, self.huge)
        path = os.path.join(self.tmp, f"{self.seed}-run{self.runs}.jsonl")
        run_id = f"{name}-{self.runs}"
        self.runs += 1
        with open(path, "w") as f:
            f.write("".join(json.dumps(l) + "\n" for l in lines))
        day = DAY0 + rng.randrange(0, 120)
        at = rng.choice([date_of(day), f"{date_of(day)}T{rng.randrange(24):02d}:07:00Z",
                         f"@{day * 86400 + rng.randrange(86400)}"])
        self.tool("fdx-ingest", ["--at", at, "--run-id", run_id, db, path], f"ingest {name}")
        model.id = store_id(db)  # a copy's first write gives it its own identity
        for cell, n in adds:
            model.add(cell, model.id, day, n)
            model.events.add((self.events, cell, n))
            self.events += 1
        model.commit()
        self.run_ids.append(run_id)

    def copy(self, name, new):
        db, model = self.stores[name]
        shutil.copyfile(db, self.path(new))
        self.stores[new] = (self.path(new), model.copy())

    def merge(self, target, sources):
        db, model = self.stores[target]
        self.tool("fdx-merge", [db] + [self.stores[s][0] for s in sources],
                  f"merge {' '.join(sources)} into {target}")
        model.id = store_id(db)
        for s in sources:
            model.merge_from(self.stores[s][1])
        model.commit()

    def merge_tree(self, target, node):
        """Merges a tree of stores into target: a node's children into a mid store
        (kept from round to round), leaves directly."""
        sources = []
        for child in node:
            if isinstance(child, str):
                sources.append(child)
                continue
            mid = self.rng.choice(["mid0", "mid1", "mid2"])
            if mid not in self.stores:
                self.new_store(mid, 90)
            if mid == target or mid in child:
                continue
            self.merge_tree(mid, child)
            sources.append(mid)
        if sources:
            self.merge(target, sources)

    def check(self, name, tops=False):
        db, model = self.stores[name]
        check_store(self.build, self.rng, f"seed {self.seed} {name}", db, model,
                    self.huge or not tops)

    def prune(self, name):
        db, model = self.stores[name]
        self.pruned = True
        args = prune(self.build, self.rng, f"seed {self.seed} {name}", db, model)
        self.check(name)
        return args


def run_seed(build, seed, tmp):
    sd = Seed(build, seed, tmp)
    rng = sd.rng
    hosts = [f"host{h}" for h in range(rng.randrange(2, 5))]
    for h in hosts:
        sd.new_store(h, rng.choice([90, 10, 20, 40]))
    sd.new_store("fleet", rng.choice([90, 90, 15, 40]))
    copies = 0
    for rnd in range(rng.randrange(2, 5)):
        for h in list(hosts):
            for _ in range(rng.randrange(0, 4)):
                sd.ingest(h)
        if rng.random() < 0.4:
            new = f"copy{copies}"
            copies += 1
            sd.copy(rng.choice(hosts), new)
            hosts.append(new)
        if rng.random() < 0.15 and sd.may_prune:
            sd.prune(rng.choice(hosts))
        leaves = rng.sample(hosts, rng.randrange(1, len(hosts) + 1))
        node = merge_tree(rng, leaves)
        sd.merge_tree("fleet", [node] if isinstance(node, str) else node)
        sd.check("fleet")
        if rng.random() < 0.3 and sd.may_prune:
            sd.prune("fleet")
        if rng.random() < 0.2:
            back = rng.choice(hosts)
            sd.merge(back, ["fleet"])
            sd.check(back)
    for h in hosts:
        if rng.random() < 0.5:
            sd.ingest(h)
    # At the end every store goes into the fleet, in random order.
    everything = [n for n in sd.stores if n != "fleet"]
    rng.shuffle(everything)
    sd.merge("fleet", everything)
    for name in sd.stores:
        sd.check(name, tops=name in ("fleet", hosts[0]))
    fleet_db, fleet = sd.stores["fleet"]
    if not sd.pruned:
        want = {}
        for _, cell, n in set().union(*(m.events for _, m in sd.stores.values())):
            want[cell] = sat(want.get(cell, 0) + n)
        check(fleet.totals() == want and read_rows(fleet_db)[1] == want,
              f"seed {seed}: the fleet holds every feed's observations once",
              f"{read_rows(fleet_db)[1]}\nwant {want}")
    con = sqlite3.connect(fleet_db)
    runs = sorted(r[0] for r in con.execute("SELECT run_id FROM fleet_ledger WHERE kind = 'ingest'"
                                            " AND run_id IS NOT NULL"))
    con.close()
    check(runs == sorted(sd.run_ids), f"seed {seed}: the fleet's ledger names every run once",
          f"{runs}\nwant {sorted(sd.run_ids)}")


def main():
    build = sys.argv[1]
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with tempfile.TemporaryDirectory(prefix="fdx-history-") as tmp:
        for seed in range(seeds):
            run_seed(build, seed, tmp)
    return finish("history_model")


if __name__ == "__main__":
    sys.exit(main())
