#!/usr/bin/env python3
"""Model test of the time axis: random ingests on random days (backfills
included) into host stores with random daily windows, random prunes, and
merges in random trees, must leave in every store the daily history, window
rankings, growth rankings and totals that an independent model computes.

Usage: history_model_test.py BUILD_DIR [SEEDS]
"""
import datetime
import json
import os
import random
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


class Store:
    """What a store's history should hold: counts per (cell, history day)."""

    def __init__(self, daily_days=90):
        self.daily_days = daily_days
        self.rolled_before = -2**31
        self.latest = None
        self.rows = {}  # (cell, day) -> count

    def add(self, cell, day, count):
        key = (cell, month_start(day) if day < self.rolled_before else day)
        self.rows[key] = min(self.rows.get(key, 0) + count, COUNT_MAX)
        self.latest = day if self.latest is None else max(self.latest, day)

    def commit(self):
        if self.latest is None:
            return
        keep_from = month_start(self.latest - self.daily_days + 1)
        if keep_from <= self.rolled_before:
            return
        rolled = {}
        for (cell, day), n in self.rows.items():
            if self.rolled_before <= day < keep_from:
                day = month_start(day)
            rolled[(cell, day)] = min(rolled.get((cell, day), 0) + n, COUNT_MAX)
        self.rows = rolled
        self.rolled_before = keep_from

    def prune(self, pred, before=None):
        """Removes the cells pred accepts (and, with before, not seen since that day)."""
        seen = {}
        for (cell, day) in self.rows:
            seen[cell] = max(seen.get(cell, day), day)
        gone = {c for c in seen if pred(c) and (before is None or seen[c] < before)}
        self.rows = {k: n for k, n in self.rows.items() if k[0] not in gone}

    def totals(self):
        out = {}
        for (cell, _), n in self.rows.items():
            out[cell] = min(out.get(cell, 0) + n, COUNT_MAX)
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
    for kind, view, key in (("miss", "miss_daily", "wanted"),
                            ("dispatch", "dispatch_daily", "structure_key")):
        for r in con.execute(f"SELECT {key}, op, kernel_source, kernel_revision, cc_major, "
                             f"cc_minor, hardware_sku, day, count FROM {view}"):
            cell = (kind, r[0], r[1], r[2], int(r[3], 16), (r[4], r[5]), r[6])
            day = (datetime.date.fromisoformat(r[7]) - EPOCH).days
            rows[(cell, day)] = r[8]
    totals = {}
    for kind, view, key in (("miss", "miss_cells", "wanted"),
                            ("dispatch", "dispatch_cells", "structure_key")):
        for r in con.execute(f"SELECT {key}, op, kernel_source, kernel_revision, cc_major, "
                             f"cc_minor, hardware_sku, count FROM {view}"):
            totals[("miss" if kind == "miss" else "dispatch", r[0], r[1], r[2], int(r[3], 16),
                    (r[4], r[5]), r[6])] = r[7]
    con.close()
    return rows, totals


def top(build, db, args):
    p = subprocess.run([os.path.join(build, "fdx-top"), "--json", "-n", "0", db] + args,
                       capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else p.stderr


def check_store(build, rng, name, db, model, huge):
    rows, totals = read_rows(db)
    check(rows == model.rows, f"{name}: daily history", f"{sorted(rows.items())}\n"
          f"want {sorted(model.rows.items())}")
    check(totals == model.totals(), f"{name}: totals are the history's sums",
          f"{totals}\nwant {model.totals()}")
    if huge or model.latest is None:
        return
    misses = [(c, d, n) for (c, d), n in model.rows.items() if c[0] == "miss"]
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


def run_seed(build, seed, tmp):
    rng = random.Random(seed)
    huge = seed % 7 == 3
    ingest = os.path.join(build, "fdx-ingest")
    hosts, run_ids = {}, []
    for h in range(rng.randrange(2, 5)):
        name = f"host{h}"
        db = os.path.join(tmp, f"{seed}-{name}.db")
        model = Store(rng.choice([90, 10, 20, 40]))
        for r in range(rng.randrange(1, 10)):
            lines, adds = gen_records(rng, huge)
            path = os.path.join(tmp, f"{seed}-{name}-{r}.jsonl")
            with open(path, "w") as f:
                f.write("".join(json.dumps(l) + "\n" for l in lines))
            day = DAY0 + rng.randrange(0, 120)
            at = rng.choice([date_of(day), f"{date_of(day)}T{rng.randrange(24):02d}:07:00Z",
                             f"@{day * 86400 + rng.randrange(86400)}"])
            cmd = [ingest, "-q", "--at", at, "--run-id", f"{name}-{r}"]
            if r == 0 and model.daily_days != 90:
                cmd += ["--daily-days", str(model.daily_days)]
            p = subprocess.run(cmd + [db, path], capture_output=True, text=True)
            check(p.returncode == 0, f"seed {seed}: ingest", p.stderr)
            for cell, n in adds:
                model.add(cell, day, n)
            model.commit()
        hosts[name] = (db, model)
        run_ids += [f"{name}-{r}" for r in range(r + 1)]
        check_store(build, rng, f"seed {seed} {name}", db, model, huge)
        if rng.random() < 0.4:
            args = prune(build, rng, f"seed {seed} {name}", db, model)
            check_store(build, rng, f"seed {seed} {name} pruned {' '.join(args)}", db, model, huge)
    counter = [0]

    def build_node(node):
        if isinstance(node, str):
            return hosts[node]
        children = [build_node(c) for c in node]
        counter[0] += 1
        db = os.path.join(tmp, f"{seed}-merged{counter[0]}.db")
        p = subprocess.run([os.path.join(build, "fdx-merge"), "-q", db] + [c[0] for c in children],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"seed {seed}: merge", p.stderr)
        model = Store()
        for _, child in children:
            for (cell, day), n in sorted(child.rows.items(), key=lambda kv: kv[0][1]):
                model.add(cell, day, n)
        model.commit()
        check_store(build, rng, f"seed {seed} merged{counter[0]}", db, model, huge)
        return db, model

    fleet = build_node(merge_tree(rng, sorted(hosts)))
    args = prune(build, rng, f"seed {seed} fleet", fleet[0], fleet[1])
    check_store(build, rng, f"seed {seed} fleet pruned {' '.join(args)}", fleet[0], fleet[1], huge)
    con = sqlite3.connect(fleet[0])
    runs = sorted(r[0] for r in con.execute("SELECT run_id FROM fleet_ledger WHERE kind = 'ingest'"))
    con.close()
    check(runs == sorted(run_ids), f"seed {seed}: the fleet's ledger names every host's runs",
          f"{runs}\nwant {sorted(run_ids)}")


def main():
    build = sys.argv[1]
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with tempfile.TemporaryDirectory(prefix="fdx-history-") as tmp:
        for seed in range(seeds):
            run_seed(build, seed, tmp)
    return finish("history_model")


if __name__ == "__main__":
    sys.exit(main())
