#!/usr/bin/env python3
"""Generates realistic, seeded fdx feeds: one directory per run holding
misses.jsonl and dispatches.jsonl, as an ML runtime's dispatcher writes them.

  gen_feed.py OUTDIR [--runs N] [--lines N] [--cells N] [--candidates F] [--seed S]

--lines is per run and per kind; --cells is the number of distinct cells per
kind that the lines are drawn from (skewed, as real demand is); --candidates
is the share of dispatch lines that carry measured candidates.
"""
import argparse
import json
import os
import random

OPS = ["MatMul", "BatchMatMul", "Conv2d", "SumReduce", "Softmax", "LayerNorm", "FlashAttn",
       "AddElementwise", "Gelu", "Gather"]
DTYPES = ["F16", "BF16", "F32", "F8E4M3", "I8", "U8"]
GPUS = [([8, 9], "NVIDIA GeForce RTX 4090", "552.44"), ([8, 0], "NVIDIA A100-SXM4-80GB", "550.54"),
        ([9, 0], "NVIDIA H100 80GB HBM3", "560.35"), ([8, 6], "NVIDIA RTX A6000", "552.44")]
CPU = (None, "AMD EPYC 9654 96-Core Processor", "n/a")
SOURCES = ["baracuda", "cublas", "cutlass-3.5", "triton-jit", "portable-cpu"]
GENERIC = ["baracuda-generic-strided", "portable-cpu-strided", "cutlass-generic"]


def impl(rng, op, dts, sources):
    return {"backend": "Cpu" if sources == ["portable-cpu"] else "Cuda", "op": op, "dtypes": dts,
            "kernel_source": rng.choice(sources), "kernel_revision_hash": rng.getrandbits(64)}


def hw(rng):
    cc, sku, drv = CPU if rng.random() < 0.1 else rng.choice(GPUS)
    out = {} if cc is None else {"compute_capability": cc}
    out.update(hardware_sku=sku, driver_version=drv)
    return out


def structure_key(rng, op):
    return f"{op.lower()}:innerdiv{rng.choice([8, 16, 32, 64])}:vec{rng.choice([1, 2, 4, 8])}" \
           f":{rng.choice(['contig', 'strided', 'bcast0'])}"


def miss_cells(rng, n):
    cells = []
    for _ in range(n):
        op = rng.choice(OPS)
        dts = [rng.choice(DTYPES)] * rng.choice([1, 2, 3])
        cells.append({"wanted": structure_key(rng, op), "fallback": impl(rng, op, dts, GENERIC),
                      "hw": hw(rng)})
    return cells


def dispatch_cells(rng, n):
    cells = []
    for _ in range(n):
        op = rng.choice(OPS)
        dts = [rng.choice(DTYPES)] * rng.choice([1, 2, 3])
        cell = {"chosen": impl(rng, op, dts, SOURCES), "hw": hw(rng)}
        if rng.random() > 0.05:
            cell["structure_key"] = structure_key(rng, op)
        cell["alts"] = [impl(rng, op, dts, SOURCES) for _ in range(rng.randrange(1, 4))]
        cells.append(cell)
    return cells


def miss_line(rng, c):
    return {"schema": 2, "wanted": c["wanted"], "fallback": c["fallback"],
            "count": rng.randrange(1, 50), "hw": c["hw"]}


def dispatch_line(rng, c, with_candidates):
    rec = {"schema": 2}
    if "structure_key" in c:
        rec["structure_key"] = c["structure_key"]
    rec["chosen"] = c["chosen"]
    if with_candidates:
        cands = [{"impl_id": c["chosen"], "latency_ns": rng.randrange(5_000, 500_000)}]
        for alt in c["alts"]:
            cand = {"impl_id": alt}
            if rng.random() < 0.8:
                cand["latency_ns"] = rng.randrange(5_000, 500_000)
            cands.append(cand)
        rec["candidates"] = cands
    rec["count"] = rng.randrange(1, 1000)
    rec["hw"] = c["hw"]
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lines", type=int, default=100)
    ap.add_argument("--cells", type=int, default=50)
    ap.add_argument("--candidates", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sample-seed", type=int, default=None,
                    help="seed for drawing lines (default: --seed); hosts that share --seed "
                         "and differ here see the same cells in different proportions")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    misses, dispatches = miss_cells(rng, a.cells), dispatch_cells(rng, a.cells)
    if a.sample_seed is not None:
        rng = random.Random(a.sample_seed)
    weights = [1.0 / (i + 1) for i in range(a.cells)]  # Zipf-like demand
    for r in range(a.runs):
        d = os.path.join(a.outdir, f"run_{r:04d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "misses.jsonl"), "w", encoding="utf-8") as f:
            for c in rng.choices(misses, weights, k=a.lines):
                f.write(json.dumps(miss_line(rng, c), separators=(",", ":")) + "\n")
        with open(os.path.join(d, "dispatches.jsonl"), "w", encoding="utf-8") as f:
            for c in rng.choices(dispatches, weights, k=a.lines):
                rec = dispatch_line(rng, c, rng.random() < a.candidates)
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
