#!/usr/bin/env bash
# The main job on the sample feeds in examples/runs: ingest every run into one
# store, export it, and ask the store which misses matter most.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" --target fdx-ingest fdx-export fdx-top >/dev/null

rm -rf demo && mkdir demo
for run in examples/runs/run_*; do
  build/fdx-ingest --run-id "$(basename "$run")" demo/telemetry.db "$run"
done
build/fdx-export demo/telemetry.db demo/export
echo
echo "Top miss cells (examples/top_misses.sql):"
sqlite3 -header -column demo/telemetry.db <examples/top_misses.sql
echo
echo "The same ranking, per wanted structure key (fdx-top):"
build/fdx-top -n 5 demo/telemetry.db
