"""One shape at a time: fdx-ingest against its peers on the feeds bench/run.py
generated (bench/work/full/shapes/ after a full run, or made by
bench/gen_shapes.py with the parameters bench/shapes.py lists), each tool in
turn, reps times, as bench/run.py's shapes section does. For comparing two
builds on one shape without the hour a full run takes.

    python3 bench/compare_shapes.py [--build build] [--reps 3] [--python] SHAPE...

SHAPE is a directory name under the work dir (highcard, adversarial, flush).
The DuckDB peer runs when it is installed (npm install --prefix bench).
"""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shapes  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=os.path.join("bench", "work", "full", "shapes"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--python", action="store_true", help="also run the Python peer")
    ap.add_argument("shape", nargs="+")
    a = ap.parse_args()
    t = shapes.Tools(a.build, a.work, shapes.duckdb_status())
    for name in a.shape:
        runs = sorted(glob.glob(os.path.join(a.work, name, "run_*")))
        if not runs:
            ap.error(f"{name}: no runs under {a.work}")
        r = shapes.compare(t, "cmp_" + name, runs, a.reps, python=a.python)
        print(name, json.dumps({k: round(v, 3) if isinstance(v, float) else v
                                for k, v in r.items()}), flush=True)


if __name__ == "__main__":
    main()
