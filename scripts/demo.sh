#!/usr/bin/env bash
# The main job on the sample feeds in examples/runs: build the six programs
# into build/, ingest every run into one store (demo/telemetry.db), export it,
# and ask the store which misses matter most. It leaves demo/ as README.md's
# commands expect it: telemetry.db, the runs under runs/, the export.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" --target fdx-ingest fdx-export fdx-top fdx-merge fdx-diff fdx-prune fdx-report >/dev/null

rm -rf demo && mkdir -p demo/runs
for run in examples/runs/run_*; do
  id=$(basename "$run" | sed 's/^run_//')
  cp -R "$run" "demo/runs/$id"
  build/fdx-ingest --run-id "$id" demo/telemetry.db "demo/runs/$id"
done
build/fdx-export demo/telemetry.db demo/export
echo
echo "Top miss cells (examples/top_misses.sql):"
sqlite3 -header -column demo/telemetry.db <examples/top_misses.sql
echo
echo "The same ranking, per wanted structure key (fdx-top):"
build/fdx-top -n 5 demo/telemetry.db
echo
echo "The programs are in $PWD/build; to run README.md's commands as written:"
echo "  export PATH=\"$PWD/build:\$PATH\""
echo "  cd $PWD/demo"
