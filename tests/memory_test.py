#!/usr/bin/env python3
"""Peak memory of the tools on a store larger than their bounds: an ingest
holds a budget of cells whatever the feed, and an export reads the store page
by page through a fixed cache, so neither grows with the store. Peak RSS is
read from wait4 on each child (not a timing: it does not depend on the load).
A build with sanitizers does not run this test: their shadow memory is no
measure of fdx's.

  memory_test.py FDX_INGEST FDX_EXPORT GEN_SHAPES GEN_FEED
"""
import os
import subprocess
import sys
import tempfile

from testlib import check, finish

MIB = 1024 * 1024
BOUND = 64 * MIB  # README: "at about 30 MiB whatever the number of distinct cells"
REPEATING_BOUND = 32 * MIB  # README: "under 30 MiB of memory on feeds that repeat their cells"


def peak(cmd):
    """Exit status, peak RSS in bytes and standard error of cmd."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return p.returncode, usage.ru_maxrss * 1024, err.read().decode(errors="replace")


def main():
    ingest, export, gen, gen_feed = sys.argv[1:5]
    with tempfile.TemporaryDirectory(prefix="fdx-memory-") as tmp:
        feed, store = os.path.join(tmp, "feed"), os.path.join(tmp, "big.db")
        # 120,000 cells with 400-byte keys of their own: a store of about 100 MiB,
        # the feed several budgets long.
        subprocess.run([sys.executable, gen, "highcard", feed, "--lines", "120000", "--cells",
                        "120000", "--order", "generated", "--key-bytes", "400"], check=True)
        runs = sorted(os.path.join(feed, r) for r in os.listdir(feed))
        rc, rss, err = peak([ingest, "-q", store] + runs)
        check(rc == 0, "ingest of the large feed", err)
        size = os.path.getsize(store)
        check(size > 2 * BOUND, f"the store is larger than twice the bound ({size} bytes)")
        check(rss < BOUND, f"ingest's peak RSS under {BOUND // MIB} MiB ({rss / MIB:.1f} MiB)")

        out = os.path.join(tmp, "out")
        rc, rss, err = peak([export, store, out])
        check(rc == 0, "export of the large store", err)
        check(rss < BOUND, f"export's peak RSS under {BOUND // MIB} MiB ({rss / MIB:.1f} MiB) "
              f"for a store of {size / MIB:.0f} MiB")
        lines = sum(1 for name in ("misses.jsonl", "dispatches.jsonl")
                    for _ in open(os.path.join(out, name), "rb"))
        check(lines == 120000, f"every cell exported ({lines})")
        padded_feeds(ingest, tmp)
        repeating_cells(ingest, gen_feed, tmp)
    return finish("memory")


def repeating_cells(ingest, gen_feed, tmp):
    """A feed that repeats 30,000 cells a kind, most dispatches with lists,
    over 50 runs: the decoding threads' line memos grow to their largest
    while the pending cells fill their budget and spill. The memos take
    what they hold from that budget, so the two never add up past it (they
    took this ingest to 35 MiB when they did)."""
    feed, store = os.path.join(tmp, "repeating"), os.path.join(tmp, "repeating.db")
    subprocess.run([sys.executable, gen_feed, "--runs", "50", "--lines", "5000", "--cells",
                    "30000", "--candidates", "0.8", "--seed", "5", feed],
                   check=True, stdout=subprocess.DEVNULL)
    runs = sorted(os.path.join(feed, r) for r in os.listdir(feed))
    rc, rss, err = peak([ingest, "-q", "--threads", "2", store] + runs)
    check(rc == 0, "ingest of the repeating feed", err)
    check(rss < REPEATING_BOUND, f"peak RSS of a feed that repeats 30,000 cells a kind under "
          f"{REPEATING_BOUND // MIB} MiB ({rss / MIB:.1f} MiB)")


RECORD = (b'{"schema":2,"wanted":"w","fallback":{"backend":"Cuda","op":"Op","dtypes":["F16"],'
          b'"kernel_source":"k","kernel_revision_hash":1},"count":1,'
          b'"hw":{"hardware_sku":"s","driver_version":"d"}}')


def padded_feeds(ingest, tmp):
    """Records each followed by what holds no record: 300 KB of blank lines,
    or a line past the limit (skipped). The blocks a batch's lines are read
    into count against its budget with what lies between them, so that a
    batch of such lines holds as little as one of packed lines does."""
    for what, pad, n, opts in (("blank lines", b"\n" * 300000, 400, []),
                               ("over-long lines", b"x" * (1100000) + b"\n", 100,
                                ["--skip-invalid"])):
        feed = os.path.join(tmp, "padded.jsonl")
        with open(feed, "wb") as f:
            for _ in range(n):
                f.write(RECORD + b"\n" + pad)
        rc, rss, err = peak([ingest, "-q"] + opts + [os.path.join(tmp, "padded.db"), feed])
        check(rc == 0, f"ingest of records between {what}", err)
        check(rss < BOUND, f"peak RSS of records between {what} under {BOUND // MIB} MiB "
              f"({rss / MIB:.1f} MiB for a feed of {os.path.getsize(feed) / MIB:.0f} MiB)")
        os.remove(feed)


if __name__ == "__main__":
    sys.exit(main())
