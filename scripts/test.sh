#!/usr/bin/env bash
# Builds fdx and runs the whole test suite (what CI runs): a smoke run of the
# benchmarks, the suite as released, then the suite again built with
# AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)

cmake -S . -B build -DFDX_BUILD_TESTS=ON -DFDX_WERROR=ON >/dev/null
cmake --build build -j"$jobs"

# The benchmark suite at small size: it must work end to end; its numbers
# are reported, never asserted.
python3 bench/run.py --smoke --build build --work build/bench-work --out build/bench-results

ctest --test-dir build --output-on-failure -j"$jobs"

cmake -S . -B build-asan -DFDX_BUILD_TESTS=ON -DFDX_WERROR=ON -DFDX_SANITIZE=ON \
      -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
