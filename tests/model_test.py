#!/usr/bin/env python3
"""Differential test: random valid feeds, ingested in random groupings through
fdx-ingest and exported with fdx-export, must equal what an independent model
of the reference sink (telemetry_sink.rs, docs/FORMAT.md) flushes after seeing
every line in order.

Usage: model_test.py FDX_INGEST FDX_EXPORT [SEEDS]
"""
import json
import os
import random
import subprocess
import sys
import tempfile

from testlib import check, finish

U64_MAX = 2**64 - 1
COUNT_MAX = 2**63 - 1

STRINGS = ["", "a", "b", "mm:innerdiv16", "/slash/", "quote\"d", "back\\slash", "tab\tnl\n",
           "\x01\x1f", "\x7f", "é", "Ω≈ç", "😀", "a\u2028b", "A", "a\x00"[:1], "zz", "aa"]
U64S = [0, 1, 2748, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 1, U64_MAX - 1, U64_MAX]


def pick_u64(rng):
    return rng.choice(U64S) if rng.random() < 0.6 else rng.randrange(0, U64_MAX + 1)


def make_impl(rng, pool):
    return rng.choice(pool)


def impl_pool(rng, n):
    pool = []
    for _ in range(n):
        pool.append({"backend": rng.choice(["Cuda", "Cpu", "Vulkan", "é"]),
                     "op": rng.choice(["MatMul", "SumReduce", "x"]),
                     "dtypes": rng.choice([[], ["F16"], ["F16", "F16"], ["BF16", "é"], ["F16", ""]]),
                     "kernel_source": rng.choice(STRINGS),
                     "kernel_revision_hash": pick_u64(rng)})
    return pool


def hw_pool(rng, n):
    pool = []
    for _ in range(n):
        hw = {"hardware_sku": rng.choice(STRINGS), "driver_version": rng.choice(["n/a", "552.44", ""])}
        r = rng.random()
        if r < 0.4:
            hw["compute_capability"] = [rng.choice([0, 8, 9, 4294967295]), rng.choice([0, 9, 10])]
        elif r < 0.5:
            hw["compute_capability"] = None
        pool.append(hw)
    return pool


def gen_record(rng, impls, hws, keys):
    hw = dict(rng.choice(hws))
    count = rng.choice([0, 1, 1, 2, 5, 1000, COUNT_MAX, U64_MAX]) if rng.random() < 0.3 else rng.randrange(0, 10)
    if rng.random() < 0.5:
        return {"schema": 2, "wanted": rng.choice(keys), "fallback": make_impl(rng, impls),
                "count": count, "hw": hw}
    rec = {"schema": 2}
    r = rng.random()
    if r < 0.2:
        pass  # unkeyed, key absent
    elif r < 0.3:
        rec["structure_key"] = None
    else:
        rec["structure_key"] = rng.choice(keys)
    rec["chosen"] = make_impl(rng, impls)
    r = rng.random()
    if r < 0.4:
        cands = []
        for _ in range(rng.randrange(1, 4)):
            c = {"impl_id": make_impl(rng, impls)}
            lr = rng.random()
            if lr < 0.6:
                c["latency_ns"] = pick_u64(rng)
            elif lr < 0.8:
                c["latency_ns"] = None
            cands.append(c)
        rec["candidates"] = cands
    elif r < 0.6:
        rec["candidates"] = []
    rec["count"] = count
    rec["hw"] = hw
    return rec


def vary(rng, rec):
    """The same record with another count and other latencies: a feed's next run."""
    rec = json.loads(json.dumps(rec))
    rec["count"] = rng.randrange(0, 10) if rng.random() < 0.7 else pick_u64(rng)
    for c in rec.get("candidates") or []:
        if isinstance(c.get("latency_ns"), int):
            c["latency_ns"] = pick_u64(rng)
    return rec


def to_line(rng, rec):
    """Serialise a record the way a varied producer might."""
    items = list(rec.items())
    if rng.random() < 0.3:
        rng.shuffle(items)
    if rng.random() < 0.2:
        items.insert(rng.randrange(len(items) + 1), ("future_field", {"x": [1.5, -2, "s"]}))
    return json.dumps(dict(items), ensure_ascii=rng.random() < 0.3, separators=(",", ":"))


# ---- the model ----

def impl_key(i):
    return (i["backend"], i["op"], tuple(i["dtypes"]), i["kernel_source"], i["kernel_revision_hash"])


def hw_key(h):
    cc = h.get("compute_capability")
    return (tuple(cc) if cc is not None else None, h["hardware_sku"], h["driver_version"])


class Sink:
    def __init__(self):
        self.misses = {}
        self.dispatches = {}

    def record(self, rec):
        add = max(rec["count"], 1)
        if "wanted" in rec:
            k = (rec["wanted"], impl_key(rec["fallback"]), hw_key(rec["hw"]))
            self.misses[k] = min(self.misses.get(k, 0) + add, COUNT_MAX)
        else:
            k = (rec.get("structure_key"), impl_key(rec["chosen"]), hw_key(rec["hw"]))
            count, cands = self.dispatches.get(k, (0, []))
            new = rec.get("candidates") or []
            self.dispatches[k] = (min(count + add, COUNT_MAX), new if new else cands)


def dump(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def b(s):
    return s.encode("utf-8")


def impl_obj(k):
    return {"backend": k[0], "op": k[1], "dtypes": list(k[2]), "kernel_source": k[3],
            "kernel_revision_hash": k[4]}


def hw_obj(k):
    o = {}
    if k[0] is not None:
        o["compute_capability"] = list(k[0])
    o["hardware_sku"] = k[1]
    o["driver_version"] = k[2]
    return o


def tie(impl, hw):
    cc = (0,) if hw[0] is None else (1,) + hw[0]
    return (b(impl[0]), b(impl[1]), b(dump(list(impl[2]))), cc, b(hw[1]), b(hw[2]))


def expected(sink):
    misses = sorted(sink.misses.items(),
                    key=lambda kv: (b(kv[0][0]), b(kv[0][1][3]), kv[0][1][4]) + tie(kv[0][1], kv[0][2]))
    out_m = ""
    for (wanted, impl, hw), count in misses:
        out_m += dump({"schema": 2, "wanted": wanted, "fallback": impl_obj(impl), "count": count,
                       "hw": hw_obj(hw)}) + "\n"
    disp = sorted(sink.dispatches.items(),
                  key=lambda kv: ((0, b"") if kv[0][0] is None else (1, b(kv[0][0])),
                                  b(kv[0][1][3]), kv[0][1][4]) + tie(kv[0][1], kv[0][2]))
    out_d = ""
    for (key, impl, hw), (count, cands) in disp:
        o = {"schema": 2}
        if key is not None:
            o["structure_key"] = key
        o["chosen"] = impl_obj(impl)
        if cands:
            o["candidates"] = [dict({"impl_id": impl_obj(impl_key(c["impl_id"]))},
                                    **({"latency_ns": c["latency_ns"]}
                                       if c.get("latency_ns") is not None else {}))
                               for c in cands]
        o["count"] = count
        o["hw"] = hw_obj(hw)
        out_d += dump(o) + "\n"
    return out_m, out_d


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed ({p.returncode}): {p.stderr.decode(errors='replace')}")


def one_seed(seed, ingest, export, tmp):
    rng = random.Random(seed)
    impls, hws = impl_pool(rng, rng.randrange(1, 6)), hw_pool(rng, rng.randrange(1, 4))
    keys = rng.sample(STRINGS, rng.randrange(1, 6))
    sink = Sink()
    runs, history = [], []
    for r in range(rng.randrange(1, 6)):
        d = os.path.join(tmp, f"s{seed}", f"run_{r:04d}")
        os.makedirs(d)
        files = {"misses.jsonl": [], "dispatches.jsonl": []}
        for _ in range(rng.randrange(0, 60)):
            # Records come back with new numbers, written the same way, as
            # they do run after run (the ingest skips parsing those).
            if history and rng.random() < 0.4:
                rec, style = rng.choice(history)
                rec = vary(rng, rec)
            else:
                rec, style = gen_record(rng, impls, hws, keys), rng.randrange(1 << 30)
                history.append((rec, style))
            files["misses.jsonl" if "wanted" in rec else "dispatches.jsonl"].append(
                to_line(random.Random(style), rec) + ("\n\n" if rng.random() < 0.05 else "\n"))
        for name, lines in files.items():
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.writelines(lines)
        for name in ("misses.jsonl", "dispatches.jsonl"):  # the order a run dir is read in
            for line in files[name]:
                if line.strip():
                    sink.record(json.loads(line))
        runs.append(d)
    db = os.path.join(tmp, f"s{seed}.db")
    i = 0
    while i < len(runs):  # random groupings of consecutive runs per invocation
        n = rng.randrange(1, len(runs) - i + 1)
        threads = str(rng.choice([1, 2, 4]))  # the threaded and inline paths must agree
        run([ingest, "-q", "--threads", threads, db] + runs[i:i + n])
        i += n
    out = os.path.join(tmp, f"s{seed}-out")
    run([export, db, out])
    want_m, want_d = expected(sink)
    for name, want in (("misses.jsonl", want_m), ("dispatches.jsonl", want_d)):
        with open(os.path.join(out, name), encoding="utf-8") as f:
            got = f.read()
        if got != want:
            print(f"seed {seed}: {name} differs from the model", file=sys.stderr)
            for g, w in zip(got.splitlines(), want.splitlines()):
                if g != w:
                    print(f"  got:  {g}\n  want: {w}", file=sys.stderr)
                    break
            else:
                print(f"  lines: got {len(got.splitlines())}, want {len(want.splitlines())}",
                      file=sys.stderr)
            return False
    return True


def main():
    ingest, export = sys.argv[1], sys.argv[2]
    seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    with tempfile.TemporaryDirectory(prefix="fdx-model-") as tmp:
        for seed in range(seeds):
            check(one_seed(seed, ingest, export, tmp), f"seed {seed}")
    return finish("model")


if __name__ == "__main__":
    sys.exit(main())
