#!/usr/bin/env bash
# End-to-end checks of the time axis from the command line: --at parsing,
# fdx-top's windows and growth, retention rollup, fdx-diff and fdx-prune.
# Usage: time_cli_test.sh BUILD_DIR
set -u
B=$1
INGEST=$B/fdx-ingest TOP=$B/fdx-top
NAME=time_cli
. "$(dirname "$0")/shlib.sh"
is() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', want '$2'"; fi; }
q() { sqlite3 "$1" "$2"; }

# miss LINE WANTED COUNT [CC]: one miss record (a CPU stamp without CC)
miss() {
  local hw='"hardware_sku":"sku","driver_version":"d1"'
  [ -n "${3:-}" ] && hw="\"compute_capability\":[${3%.*},${3#*.}],$hw"
  printf '{"schema":2,"wanted":"%s","fallback":{"backend":"Cuda","op":"MatMul","dtypes":["F16"],"kernel_source":"k","kernel_revision_hash":1},"count":%s,"hw":{%s}}\n' "$1" "$2" "$hw"
}
miss w1 1 >"$T/one.jsonl"

# --at: every accepted form, and the capture time the ledger keeps
i=0
for form in 2026-10-01:1790812800 2026-10-01T12:30:45Z:1790857845 2026-10-01T12:30:45.999Z:1790857845 \
            2026-10-01T12:30:45+00:00:1790857845 2026-10-01T23:59:60Z:1790899199 \
            @1790812800:1790812800 @0:0 2024-02-29:1709164800 9999-12-31T23:59:59Z:253402300799; do
  i=$((i + 1))
  expect 0 "--at ${form%:*}" -- "$INGEST" -q --at "${form%:*}" "$T/at$i.db" "$T/one.jsonl"
  is "$(q "$T/at$i.db" 'SELECT captured_at FROM ingest_ledger')" "${form##*:}" "captured_at of --at ${form%:*}"
  is "$(q "$T/at$i.db" 'SELECT day * 86400 <= '"${form##*:}"' FROM cell_history')" 1 "day of --at ${form%:*}"
done
# and every reject: a usage error naming the accepted forms, the store untouched
for bad_at in '' 2026-13-01 2026-02-29 2026-10-1 2026-10-01T25:00:00Z 2026-10-01T12:00:00 \
              2026-10-01T12:00:00+02:00 2026-10-01T12:00Z 2026-10-01x '@' @-5 @12x \
              @253402300800 1969-12-31 'next tuesday' 2026-10-01T12:00:00.Z; do
  expect 2 "--at '$bad_at'" -- "$INGEST" --at "$bad_at" "$T/rej.db" "$T/one.jsonl"
  has err "YYYY-MM-DD (midnight UTC), an RFC 3339 UTC time such as 2026-10-01T12:00:00Z, or @UNIX_SECONDS"
done
[ ! -e "$T/rej.db" ] && ok || bad "a rejected --at created the store"
# default: now
expect 0 "no --at" -- "$INGEST" -q "$T/now.db" "$T/one.jsonl"
is "$(q "$T/now.db" "SELECT abs(captured_at - strftime('%s','now')) < 600 FROM ingest_ledger")" 1 "default capture time is now"

# fdx-top: --since/--until usage
for args in "--since x" "--until 2026-02-30" "--growth 0" "--growth 7x" "--growth 7 --since 2026-10-01" \
            "--since 2026-10-02 --until 2026-10-02"; do
  expect 2 "fdx-top $args" -- "$TOP" $args "$T/now.db"
done

finish
