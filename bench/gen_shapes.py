#!/usr/bin/env python3
"""Seeded feeds of the shapes where fdx's line memo cannot help, beside
gen_feed.py's repeat-heavy feed. Cells and lines look like gen_feed.py's (the
same operations, dtypes, devices, kernel sources and string lengths); every
shape writes one directory per run holding misses.jsonl and dispatches.jsonl.

  gen_shapes.py highcard OUTDIR --lines N --cells M [--runs R] [--candidates F]
                [--order random|generated] [--pool P --sample-seed S] [--seed S]
      A store that grows: N lines (half of each kind) over exactly M distinct
      cells (half of each kind, rounded). Every cell appears once; the other
      N - M lines repeat cells drawn uniformly. With --order random (the
      default) the lines are shuffled, so a cell's repeats are spread over the
      whole feed; --order generated writes each cell in turn (then N must equal
      M), streaming, for building large stores in constant memory. --pool P
      draws the M cells from a pool of P cells made by --seed, picked by
      --sample-seed: stores of hosts that share part of their cells. F is the
      share of dispatch lines with candidates (default 0.2). The lines are
      split evenly over R run directories (default 1).

  gen_shapes.py adversarial OUTDIR [--runs R] [--lines L] [--cells C]
                [--candidates F] [--seed S]
      Lines that never repeat. L lines per run and kind (default 5000) drawn,
      skewed as in gen_feed.py, from C cells per kind (default 5000); a share F
      of the dispatch lines (default 0.5) carries candidates, and every
      candidates list is different (its alternatives are fresh implementations
      each time, one to three of them). Every line also has a space after a
      random subset of its commas, so no two lines are the same bytes around
      their count and latency digits.

  gen_shapes.py flush OUTDIR [--runs R] [--cells C] [--candidates F] [--seed S]
      What a sink's flushes write: R runs (default 20), each holding each of C
      cells per kind (default 25000) exactly once, in the same order every run,
      with a new count. A share F of the dispatch cells (default 0.2) carries
      candidates: the same implementations every run (which of them have a
      latency is fixed too), with new latencies each run.

Every shape also takes --key-bytes K (default 0: the keys gen_feed.py draws,
a few hundred of them, shared by many cells): each cell's structure key or
wanted key is then made its own and K bytes long (the drawn key, the cell's
number, then filler), as when keys spell out shapes. What a cell costs in
memory grows with its key; the peak RSS targets hold whatever K is.

And --newer-fields N (default 0: none): each record as a producer newer than
this schema's readers writes it, with N members no field has (a timestamp, a
run id, a nullable number, a string with an escape, an array of mixed values,
then an object; at least the object) after "schema", and its hw with one more
(a device id). The values change from line to line. Readers ignore such
members (WIRE.md, "Unknown keys are ignored"); the rest of each record is the
bytes the shape writes without them.

Everything is a function of the parameters: the same command writes the same
bytes.
"""
import argparse
import json
import os
import random

from gen_feed import SOURCES, dispatch_cells, impl, miss_cells

J = dict(separators=(",", ":"))


def dumps(o):
    return json.dumps(o, **J)


class MissCell:
    """A miss cell as the text around its count."""
    __slots__ = ("head", "tail")

    def __init__(self, c):
        self.head = '{"schema":2,"wanted":%s,"fallback":%s,"count":' % (
            dumps(c["wanted"]), dumps(c["fallback"]))
        self.tail = ',"hw":%s}\n' % dumps(c["hw"])

    def line(self, rng):
        return f"{self.head}{rng.randrange(1, 50)}{self.tail}"


class DispatchCell:
    """A dispatch cell as the text around its candidates and count."""
    __slots__ = ("head", "tail", "cands")

    def __init__(self, c):
        head = '{"schema":2'
        if "structure_key" in c:
            head += ',"structure_key":' + dumps(c["structure_key"])
        self.head = head + ',"chosen":' + dumps(c["chosen"])
        self.tail = ',"hw":%s}\n' % dumps(c["hw"])
        self.cands = [dumps(c["chosen"])] + [dumps(x) for x in c["alts"]]

    def line(self, rng, with_candidates):
        cands = ""
        if with_candidates:
            parts = ['{"impl_id":%s,"latency_ns":%d}' % (self.cands[0],
                                                         rng.randrange(5_000, 500_000))]
            for alt in self.cands[1:]:
                if rng.random() < 0.8:
                    parts.append('{"impl_id":%s,"latency_ns":%d}' %
                                 (alt, rng.randrange(5_000, 500_000)))
                else:
                    parts.append('{"impl_id":%s}' % alt)
            cands = ',"candidates":[' + ",".join(parts) + "]"
        return f'{self.head}{cands},"count":{rng.randrange(1, 1000)}{self.tail}'


FILL = "abcdefghijklmnopqrstuvwxyz0123456789"


class Widen:
    """Makes each cell's key its own and k bytes long (k 0: leaves keys alone)."""

    def __init__(self, k):
        self.k, self.n = k, 0

    def key(self, key):
        head = f"{key}:{self.n:x}:"
        self.n += 1
        if len(head) >= self.k:
            return head
        fill = (FILL * (self.k // len(FILL) + 2))[self.n % len(FILL):]
        return head + fill[:self.k - len(head)]

    def __call__(self, cells):
        if self.k:
            for c in cells:
                for field in ("wanted", "structure_key"):
                    if field in c:
                        c[field] = self.key(c[field])
        return cells


class Newer:
    """A feed file as a producer newer than schema 2's readers writes it: each
    record gains n members no field has (the last of them an object), and its
    hw one more, all of them after "schema". Their values change from line to
    line. Drawn from a generator of their own, so the records are otherwise
    the bytes the shape writes without them."""

    def __init__(self, f, n, rng):
        self.f, self.n, self.rng = f, n, rng

    def members(self):
        r = self.rng
        pool = ['"ts_ns":%d' % r.randrange(1 << 60, 1 << 61),
                '"run_id":"%016x"' % r.getrandbits(64),
                '"latency_p99_ns":%s' % (r.randrange(1000, 10 ** 6) if r.random() < 0.8
                                        else "null"),
                '"fallback_reason":"%s"' % r.choice(["no kernel", "shape", "dtype \u2192 f32"]),
                '"flags":[%s]' % ",".join(r.choice(["true", "false", "1.5e-3", '"x"'])
                                          for _ in range(r.randrange(0, 4)))]
        out = [pool[i % len(pool)] for i in range(self.n - 1)]
        out.append('"ctx":{"pid":%d,"thread":"w%d","tags":[]}' % (r.randrange(1, 1 << 22),
                                                                  r.randrange(64)))
        return ",".join(out)

    def line(self, text):
        head = '{"schema":2'
        assert text.startswith(head)
        text = head + "," + self.members() + text[len(head):]
        return text.replace('"hw":{', '"hw":{"uuid":"GPU-%08x",' % self.rng.getrandbits(32), 1)

    def write(self, text):
        self.f.write("".join(self.line(t) for t in text.splitlines(True)))

    def writelines(self, lines):
        for t in lines:
            self.write(t)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


def run_files(a, r):
    d = os.path.join(a.outdir, f"run_{r:04d}")
    os.makedirs(d, exist_ok=True)
    files = (open(os.path.join(d, "misses.jsonl"), "w", encoding="utf-8"),
             open(os.path.join(d, "dispatches.jsonl"), "w", encoding="utf-8"))
    if not a.newer_fields:
        return files
    return tuple(Newer(f, a.newer_fields, random.Random(a.seed * 1000003 + r * 2 + i))
                 for i, f in enumerate(files))


def split(n, parts):
    """n items over parts chunks, as even as possible."""
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def highcard(a):
    widen = Widen(a.key_bytes)
    mc, dc = (a.cells + 1) // 2, a.cells // 2
    ml, dl = (a.lines + 1) // 2, a.lines // 2
    if ml < mc or dl < dc:
        raise SystemExit("highcard: --lines must be at least --cells")
    rng = random.Random(a.seed)
    if a.order == "generated":
        if a.lines != a.cells or a.pool:
            raise SystemExit("highcard: --order generated needs --lines == --cells, no --pool")
        # One cell at a time, so that millions of cells take no memory.
        for r, (m_n, d_n) in enumerate(zip(split(mc, a.runs), split(dc, a.runs))):
            mf, df = run_files(a, r)
            with mf, df:
                for _ in range(m_n):
                    mf.write(MissCell(widen(miss_cells(rng, 1))[0]).line(rng))
                for _ in range(d_n):
                    cell = DispatchCell(widen(dispatch_cells(rng, 1))[0])
                    df.write(cell.line(rng, rng.random() < a.candidates))
        return
    if a.pool:
        pool_m, pool_d = (a.pool + 1) // 2, a.pool // 2
        if pool_m < mc or pool_d < dc:
            raise SystemExit("highcard: --pool must be at least --cells")
        misses = [MissCell(c) for c in widen(miss_cells(rng, pool_m))]
        dispatches = [DispatchCell(c) for c in widen(dispatch_cells(rng, pool_d))]
        rng = random.Random(a.sample_seed)
        misses, dispatches = rng.sample(misses, mc), rng.sample(dispatches, dc)
    else:
        misses = [MissCell(c) for c in widen(miss_cells(rng, mc))]
        dispatches = [DispatchCell(c) for c in widen(dispatch_cells(rng, dc))]

    def order(cells, lines):
        idx = list(range(len(cells))) + [rng.randrange(len(cells))
                                         for _ in range(lines - len(cells))]
        rng.shuffle(idx)
        return idx
    m_idx, d_idx = order(misses, ml), order(dispatches, dl)
    m_at = d_at = 0
    for r, (m_n, d_n) in enumerate(zip(split(ml, a.runs), split(dl, a.runs))):
        mf, df = run_files(a, r)
        with mf, df:
            mf.writelines(misses[i].line(rng) for i in m_idx[m_at:m_at + m_n])
            df.writelines(dispatches[i].line(rng, rng.random() < a.candidates)
                          for i in d_idx[d_at:d_at + d_n])
        m_at, d_at = m_at + m_n, d_at + d_n


def spaced(rng, text):
    """text with a space after a random subset of its commas (no string in these
    feeds holds a comma)."""
    parts = text.split(",")
    bits = rng.getrandbits(len(parts))
    return parts[0] + "".join((", " if (bits >> i) & 1 else ",") + p
                              for i, p in enumerate(parts[1:]))


def fresh_candidates(rng, chosen):
    """A candidates list not seen before: the chosen implementation and one to
    three alternatives with new revision hashes."""
    op, dts = chosen["op"], chosen["dtypes"]
    cands = [{"impl_id": chosen, "latency_ns": rng.randrange(5_000, 500_000)}]
    for _ in range(rng.randrange(1, 4)):
        c = {"impl_id": impl(rng, op, dts, SOURCES)}
        if rng.random() < 0.8:
            c["latency_ns"] = rng.randrange(5_000, 500_000)
        cands.append(c)
    return cands


def adversarial(a):
    widen = Widen(a.key_bytes)
    rng = random.Random(a.seed)
    misses = [MissCell(c) for c in widen(miss_cells(rng, a.cells))]
    dispatches = widen(dispatch_cells(rng, a.cells))
    weights = [1.0 / (i + 1) for i in range(a.cells)]
    for r in range(a.runs):
        mf, df = run_files(a, r)
        with mf, df:
            for c in rng.choices(misses, weights, k=a.lines):
                mf.write(spaced(rng, c.line(rng)))
            for c in rng.choices(dispatches, weights, k=a.lines):
                rec = {"schema": 2}
                if "structure_key" in c:
                    rec["structure_key"] = c["structure_key"]
                rec["chosen"] = c["chosen"]
                if rng.random() < a.candidates:
                    rec["candidates"] = fresh_candidates(rng, c["chosen"])
                rec["count"] = rng.randrange(1, 1000)
                rec["hw"] = c["hw"]
                df.write(spaced(rng, dumps(rec)) + "\n")


def flush(a):
    widen = Widen(a.key_bytes)
    rng = random.Random(a.seed)
    misses = [MissCell(c) for c in widen(miss_cells(rng, a.cells))]
    dispatches = []
    for c in widen(dispatch_cells(rng, a.cells)):
        cell = DispatchCell(c)
        # Which candidates carry a latency is part of the stable set.
        timed = [True] + [rng.random() < 0.8 for _ in cell.cands[1:]]
        dispatches.append((cell, timed if rng.random() < a.candidates else None))
    for r in range(a.runs):
        mf, df = run_files(a, r)
        with mf, df:
            mf.writelines(c.line(rng) for c in misses)
            for cell, timed in dispatches:
                cands = ""
                if timed is not None:
                    cands = ',"candidates":[' + ",".join(
                        '{"impl_id":%s,"latency_ns":%d}' % (i, rng.randrange(5_000, 500_000))
                        if t else '{"impl_id":%s}' % i
                        for i, t in zip(cell.cands, timed)) + "]"
                df.write(f'{cell.head}{cands},"count":{rng.randrange(1, 1000)}{cell.tail}')


def shape_parser(sub, name, runs, cells, candidates):
    """The options every shape takes; cells None: --cells is required."""
    p = sub.add_parser(name)
    p.add_argument("outdir")
    p.add_argument("--runs", type=int, default=runs)
    p.add_argument("--cells", type=int, default=cells, required=cells is None)
    p.add_argument("--candidates", type=float, default=candidates)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--key-bytes", type=int, default=0)
    p.add_argument("--newer-fields", type=int, default=0)
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="shape", required=True)
    h = shape_parser(sub, "highcard", 1, None, 0.2)
    h.add_argument("--lines", type=int, required=True)
    h.add_argument("--order", choices=["random", "generated"], default="random")
    h.add_argument("--pool", type=int, default=0)
    h.add_argument("--sample-seed", type=int, default=0)
    v = shape_parser(sub, "adversarial", 20, 5000, 0.5)
    v.add_argument("--lines", type=int, default=5000)
    shape_parser(sub, "flush", 20, 25000, 0.2)
    a = ap.parse_args()
    {"highcard": highcard, "adversarial": adversarial, "flush": flush}[a.shape](a)


if __name__ == "__main__":
    main()
