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

# Retention: with a 10-day daily window, whole months before it roll into
# buckets on their first day, a backfill into a rolled month lands in its
# bucket, and each cell's days still add up to its total.
R=$T/ret.db
for at_count in 2026-01-05:1 2026-01-20:2 2026-02-10:3 2026-03-15:4 2026-01-25:5; do
  { miss w1 "${at_count#*:}" 8.9; miss w2 1; } >"$T/r.jsonl"
  expect 0 "ingest at ${at_count%:*}" -- "$INGEST" -q --daily-days 10 --at "${at_count%:*}" "$R" "$T/r.jsonl"
done
is "$(q "$R" "SELECT group_concat(day || ' ' || span || ' ' || count, ', ') FROM (SELECT * FROM miss_daily WHERE wanted = 'w1' ORDER BY day)")" \
   "2026-01-01 month 8, 2026-02-01 month 3, 2026-03-15 day 4" "w1's history across the rollup"
is "$(q "$R" "SELECT group_concat(day || ' ' || count, ', ') FROM (SELECT * FROM miss_daily WHERE wanted = 'w2' ORDER BY day)")" \
   "2026-01-01 3, 2026-02-01 1, 2026-03-15 1" "w2's history across the rollup"
is "$(q "$R" "SELECT count(*) FROM miss_cells AS c WHERE count <> (SELECT sum(count) FROM miss_daily AS d WHERE d.wanted = c.wanted)")" 0 "days add up to totals"
is "$(q "$R" "SELECT daily_days, date(rolled_before * 86400, 'unixepoch') FROM history_config")" "10|2026-03-01" "the window is kept in the store"
# the window moves with the latest day; a later ingest without --daily-days keeps it
miss w1 1 8.9 >"$T/r.jsonl"
expect 0 "ingest in April" -- "$INGEST" -q --at 2026-04-20 "$R" "$T/r.jsonl"
is "$(q "$R" "SELECT group_concat(day || ' ' || span || ' ' || count, ', ') FROM (SELECT * FROM miss_daily WHERE wanted = 'w1' ORDER BY day)")" \
   "2026-01-01 month 8, 2026-02-01 month 3, 2026-03-01 month 4, 2026-04-20 day 1" "the window moved to April"
expect 2 "--daily-days 0" -- "$INGEST" --daily-days 0 "$R" "$T/r.jsonl"
# a window reaching back before 1970 rolls up from a month before it: such a
# store is written to and merged again (a check of the settings refused it)
for args in "--daily-days 1048576" "--at 1970-02-01"; do
  W=$T/wide-${args##* }.db
  # shellcheck disable=SC2086
  expect 0 "ingest with $args" -- "$INGEST" -q $args "$W" "$T/r.jsonl"
  expect 0 "a second ingest after $args" -- "$INGEST" -q --at 1970-03-01 "$W" "$T/r.jsonl"
  expect 0 "a merge of the store after $args" -- "$B/fdx-merge" -q "$W.merged" "$W"
done
is "$(q "$T/wide-1048576.db" "SELECT rolled_before < 0 FROM history_config")" "1" "rolled up from before 1970"

# Saturation: a day's count and a month bucket saturate at 2^63-1 as the total does.
S=$T/sat.db
for at_count in 2026-01-05:9223372036854775807 2026-01-06:5 2026-03-15:1; do
  miss w1 "${at_count#*:}" >"$T/r.jsonl"
  expect 0 "ingest at ${at_count%:*}" -- "$INGEST" -q --daily-days 10 --at "${at_count%:*}" "$S" "$T/r.jsonl"
done
is "$(q "$S" "SELECT (SELECT count FROM miss_cell) || ' ' || group_concat(day || ' ' || count, ', ') FROM (SELECT * FROM miss_daily ORDER BY day)")" \
   "9223372036854775807 2026-01-01 9223372036854775807, 2026-03-15 1" "saturated bucket and total"

# The views sort and join compute capability as integers, and a CPU joins.
V=$T/views.db
{ miss k 1 8.9; miss k 2 9.0; miss k 3 10.0; miss k 4 12.0; miss k 5; } >"$T/v.jsonl"
expect 0 "ingest cc" -- "$INGEST" -q "$V" "$T/v.jsonl"
is "$(q "$V" "SELECT group_concat(compute_capability, ' ') FROM (SELECT * FROM miss_cells ORDER BY cc_major, cc_minor)")" \
   "cpu 8.9 9.0 10.0 12.0" "cc order"
is "$(q "$V" "SELECT group_concat(compute_capability, ' ') FROM (SELECT * FROM miss_cells WHERE cc_major >= 9 ORDER BY cc_major)")" \
   "9.0 10.0 12.0" "cc >= 9"
for view in miss_cells miss_daily miss_demand_by_device miss_daily_by_store; do
  is "$(q "$V" "SELECT typeof(cc_major) || typeof(cc_minor) FROM $view WHERE compute_capability = 'cpu'")" "integerinteger" "$view has integer cc"
done
{ miss k 7 8.9; miss k 9; } >"$T/v2.jsonl"
expect 0 "ingest cc 2" -- "$INGEST" -q "$T/views2.db" "$T/v2.jsonl"
is "$(sqlite3 "$V" "ATTACH '$T/views2.db' AS b; SELECT group_concat(d, ' ') FROM (SELECT a.compute_capability || ':' || (x.count - a.count) AS d FROM miss_cells AS a JOIN b.miss_cells AS x USING (wanted, kernel_source, kernel_revision, cc_major, cc_minor, hardware_sku, driver_version) ORDER BY 1)")" \
   "8.9:6 cpu:4" "an ATTACH diff keeps the CPU cell"
is "$(sqlite3 "$V" "ATTACH '$T/views2.db' AS b; SELECT count(*) FROM miss_cells AS a JOIN b.miss_cells AS x USING (wanted, compute_capability)")" 2 "compute_capability joins"
expect 0 "fdx-top --cc cpu" -- "$TOP" --json --cc cpu "$V"
has out '"misses":5'
expect 0 "fdx-top --cc 10.0" -- "$TOP" --json --cc 10.0 "$V"
has out '"misses":3'

# fdx-diff: per-cell changes, largest first, a cell missing from a store
# counting 0, the CPU cell paired like any other; table and JSON.
DIFF=$B/fdx-diff
expect 0 "fdx-diff --help" -- "$DIFF" --help; has out "Usage:"
expect 0 "fdx-diff --version" -- "$DIFF" --version; has out "fdx"
expect 2 "fdx-diff one store" -- "$DIFF" "$V"
expect 2 "fdx-diff bad option" -- "$DIFF" --bogus "$V" "$V"
expect 1 "fdx-diff missing store" -- "$DIFF" "$V" "$T/nosuch.db"
has err "nosuch.db"
expect 0 "fdx-diff json" -- "$DIFF" --json -n 0 "$V" "$T/views2.db"
is "$(python3 -c 'import json,sys; print(" ".join("%s:%d:%d:%d" % (r["compute_capability"], r["before"], r["after"], r["change"]) for r in json.load(open(sys.argv[1]))))' "$T/out")" \
   "8.9:1:7:6 cpu:5:9:4 12.0:4:0:-4 10.0:3:0:-3 9.0:2:0:-2" "fdx-diff --json"
expect 0 "fdx-diff table" -- "$DIFF" -n 2 "$V" "$T/views2.db"
is "$(awk 'NR > 1 { print $1, $4, $5 }' "$T/out" | tr '\n' ' ')" "+6 miss 8.9 +4 miss cpu " "fdx-diff table, top 2"
expect 0 "fdx-diff same store" -- "$DIFF" --json "$V" "$V"
is "$(cat "$T/out")" "[]" "no change against itself"

# fdx-prune: filters, history, ledger; a pruned copy merged where the full
# store was adds nothing, and a store merged before a prune is not brought back.
PRUNE=$B/fdx-prune MERGE=$B/fdx-merge
expect 0 "fdx-prune --help" -- "$PRUNE" --help; has out "Usage:"
expect 0 "fdx-prune --version" -- "$PRUNE" --version; has out "fdx"
expect 2 "fdx-prune without a filter" -- "$PRUNE" "$T/p.db"; has err "at least one filter"
expect 2 "fdx-prune bad --before" -- "$PRUNE" --before yesterday "$T/p.db"; has err "@UNIX_SECONDS"
expect 1 "fdx-prune missing store" -- "$PRUNE" --op x "$T/nosuch.db"
[ ! -e "$T/nosuch.db" ] && ok || bad "fdx-prune created a store"
# a mistyped filter is refused before the store is opened: without it, and
# without waiting for a writer that holds it
expect 2 "fdx-prune mistyped filter, missing store" -- "$PRUNE" --revision abc "$T/nosuch.db"
has err "is not 16 hex digits"
[ ! -e "$T/nosuch.db" ] && ok || bad "fdx-prune created a store"
H=$T/host.db
{ miss old 3 8.9; miss cpu 4; } >"$T/p1.jsonl"
{ miss new 5 9.0; miss cpu 6; } >"$T/p2.jsonl"
expect 0 "host day 1" -- "$INGEST" -q --run-id r1 --at 2026-10-01 "$H" "$T/p1.jsonl"
expect 0 "host day 2" -- "$INGEST" -q --run-id r2 --at 2026-10-20 "$H" "$T/p2.jsonl"
cp "$H" "$T/copy.db"
# a filter that can match no cell is a typo, not an empty prune; a second
# value of one filter would silently replace the first
cp "$H" "$T/typo.db"
for a in "--revision abc" "--revision 0x0000000000000001" "--revision 00000000000000001" \
         "--cc 8.9x" "--cc 08.9" "--cc 4294967296.9" "--cc CPU" "--op MatMul --op Gelu" \
         "--before 2030-01-01 --before 2020-01-01"; do
  # shellcheck disable=SC2086
  expect 2 "fdx-prune $a" -- "$PRUNE" -n $a "$T/typo.db"
done
has err "given twice"
expect 0 "fdx-prune the largest compute capability" -- "$PRUNE" -n --cc 4294967295.0 "$T/typo.db"
expect 0 "fdx-prune a padded revision" -- "$PRUNE" -n --revision 0000000000000001 "$T/typo.db"
has err "would remove 3 miss cells"
cmp -s "$H" "$T/typo.db" && ok || bad "a refused prune changed the store"
# a dry run changes nothing: it makes no store of an empty file, migrates no
# older one (a writable open would; it refuses them as a reader does) and
# leaves a store in rollback-journal mode in it
: >"$T/empty.db"
expect 1 "fdx-prune -n of an empty file" -- "$PRUNE" -n --op MatMul "$T/empty.db"; has err "it is empty"
[ ! -s "$T/empty.db" ] && ok || bad "a dry run made a store of an empty file"
cp "$H" "$T/older.db"
sqlite3 "$T/older.db" "PRAGMA user_version = 5"
cp "$T/older.db" "$T/older-before.db"
expect 1 "fdx-prune -n of an older store" -- "$PRUNE" -n --op MatMul "$T/older.db"; has err "needs migrating"
cmp -s "$T/older.db" "$T/older-before.db" && ok || bad "a dry run migrated an older store"
cp "$H" "$T/rollback.db"
sqlite3 "$T/rollback.db" "PRAGMA journal_mode = DELETE" >/dev/null
cp "$T/rollback.db" "$T/rollback-before.db"
expect 0 "fdx-prune -n of a rollback-journal store" -- "$PRUNE" -n --op MatMul "$T/rollback.db"
has err "would remove"
cmp -s "$T/rollback.db" "$T/rollback-before.db" && ok || bad "a dry run switched a store to WAL"
expect 0 "fleet merges the host" -- "$MERGE" -q "$T/fleet.db" "$H"
# which host and which run brought what: the cookbook's fleet recipe
is "$(sqlite3 "$T/fleet.db" "SELECT group_concat(x, ' ') FROM (SELECT d.day || ':' || (d.store = (SELECT id FROM store_identity)) || ':' || group_concat(DISTINCT l.run_id) || ':' || sum(d.count) AS x FROM miss_daily_by_store AS d JOIN fleet_ledger AS l ON l.store = d.store AND l.day = d.day AND l.kind = 'ingest' WHERE d.wanted = 'cpu' GROUP BY d.day, d.store ORDER BY d.day)")" \
   "2026-10-01:0:r1:4 2026-10-20:0:r2:6" "the fleet says which host run brought each day"
is "$(sqlite3 "$T/fleet.db" "SELECT count(DISTINCT store) FROM miss_daily_by_store") $(sqlite3 "$H" "SELECT id FROM store_identity")" \
   "1 $(sqlite3 "$T/fleet.db" "SELECT DISTINCT store FROM miss_daily_by_store")" "attributed to the host store"
expect 0 "dry run" -- "$PRUNE" --dry-run --before 2026-10-10 "$T/copy.db"
has err "would remove 1 miss cell and 0 dispatch cells (3 observations)"
is "$(q "$T/copy.db" "SELECT count(*) FROM miss_cell")" 3 "a dry run changes nothing"
expect 0 "prune before a date" -- "$PRUNE" --before 2026-10-10 "$T/copy.db"
has err "removed 1 miss cell and 0 dispatch cells (3 observations)"
expect 0 "prune the CPU" -- "$PRUNE" -q --cc cpu "$T/copy.db"
is "$(q "$T/copy.db" "SELECT group_concat(wanted) FROM miss_cells")" "new" "pruned cells gone"
is "$(q "$T/copy.db" "SELECT count(*) FROM cell_history WHERE cell NOT IN (SELECT cell_id FROM miss_cell)")" 0 "their history gone"
is "$(q "$T/copy.db" "SELECT group_concat(l.kind || ' ' || p.filter || ' ' || p.miss_cells || ' ' || p.observations, '; ') FROM prune_log AS p JOIN ingest_ledger AS l ON l.id = p.ledger_id")" \
   'prune {"before":"2026-10-10"} 1 3; prune {"compute_capability":"cpu"} 1 10' "the ledger records the prunes"
expect 0 "a pruned copy of the host merged into the fleet" -- "$MERGE" -q "$T/fleet.db" "$T/copy.db"
is "$(q "$T/fleet.db" "SELECT count(*), sum(count) FROM miss_cell")" "3|18" "the copy's prune does not shrink the fleet"
expect 0 "the full store again is a no-op" -- "$MERGE" "$T/fleet.db" "$H"
has err "already merged, unchanged"
expect 0 "the fleet prunes" -- "$PRUNE" -q --cc cpu "$T/fleet.db"
expect 0 "re-merging the host does not resurrect" -- "$MERGE" "$T/fleet.db" "$H"
is "$(q "$T/fleet.db" "SELECT count(*), sum(count) FROM miss_cell WHERE cc_major < 0")" "0|" "the CPU cell stays pruned"
expect 0 "a pruned copy merges into a new fleet" -- "$MERGE" -q "$T/fleet2.db" "$T/copy.db"
is "$(q "$T/fleet2.db" "SELECT group_concat(wanted) FROM miss_cells")" "new" "fleet2 holds the pruned copy"
expect 0 "... and then the full store" -- "$MERGE" -q "$T/fleet2.db" "$H"
is "$(q "$T/fleet2.db" "SELECT group_concat(wanted || ':' || count) FROM (SELECT * FROM miss_cells ORDER BY wanted)")" \
   "cpu:10,new:5,old:3" "fleet2 holds the full store, each observation once"

# fdx-prune --before inside a rolled-up month: the month's bucket sits on its
# first day but counts as observed through its last, so a cell seen in that
# month is kept; a date after the month removes it.
P=$T/rolled.db
miss w3 7 >"$T/w3.jsonl"; miss w4 1 >"$T/w4.jsonl"
expect 0 "w3 on 2026-01-25" -- "$INGEST" -q --daily-days 10 --at 2026-01-25 "$P" "$T/w3.jsonl"
expect 0 "w4 on 2026-03-15" -- "$INGEST" -q --daily-days 10 --at 2026-03-15 "$P" "$T/w4.jsonl"
is "$(q "$P" "SELECT day || ' ' || span FROM miss_daily WHERE wanted = 'w3'")" "2026-01-01 month" "w3 rolled into January"
for when in 2026-01-20 2026-01-31T23:59:59Z; do
  expect 0 "prune -n --before $when" -- "$PRUNE" -n --before "$when" "$P"
  has err "would remove 0 miss cells"
done
cp "$P" "$T/rolled-before.db"
expect 0 "prune --before 2026-01-20" -- "$PRUNE" -q --before 2026-01-20 "$P"
is "$(q "$P" "SELECT group_concat(wanted || ':' || count) FROM (SELECT * FROM miss_cells ORDER BY wanted)")" \
   "w3:7,w4:1" "a cell seen in the rolled month of --before is kept"
expect 0 "prune --before 2026-02-01" -- "$PRUNE" --before 2026-02-01 "$P"
has err "removed 1 miss cell and 0 dispatch cells (7 observations)"
is "$(q "$P" "SELECT group_concat(wanted) FROM miss_cells")" "w4" "a date after the month removes it"

# A cell's candidates list is the one of the latest capture time (WIRE.md,
# section 2): a backfill with an older --at leaves a later list in place, in
# one store and through merges in either order; between two ingests at the
# same time the greater list wins, as between two stores in a merge.
dsp() {
  printf '{"schema":2,"structure_key":"sk","chosen":{"backend":"Cuda","op":"MatMul","dtypes":["F16"],"kernel_source":"s","kernel_revision_hash":1},"candidates":[{"impl_id":{"backend":"Cuda","op":"MatMul","dtypes":["F16"],"kernel_source":"%s","kernel_revision_hash":2},"latency_ns":1}],"count":1,"hw":{"hardware_sku":"sku","driver_version":"d"}}\n' "$1"
}
list_of() { "$B/fdx-export" -q "$1" - --kind dispatches | sed 's/.*"candidates":\[{"impl_id":{[^}]*"kernel_source":"\([A-Z]*\)".*/\1/'; }
dsp NEW >"$T/dnew.jsonl"; dsp OLD >"$T/dold.jsonl"; dsp TIE >"$T/dtie.jsonl"
expect 0 "list captured 2026-12-01" -- "$INGEST" -q --at 2026-12-01 "$T/c.db" "$T/dnew.jsonl"
expect 0 "backfill captured 2026-11-01" -- "$INGEST" -q --at 2026-11-01 "$T/c.db" "$T/dold.jsonl"
is "$(list_of "$T/c.db")" NEW "a backfill leaves the later capture's list"
is "$(q "$T/c.db" "SELECT count || ' ' || candidates_set_at FROM dispatch_cell")" "2 1796083200000" \
   "the backfill counts, and the list keeps its capture time"
expect 0 "same capture time, a greater list" -- "$INGEST" -q --at 2026-12-01 "$T/c.db" "$T/dtie.jsonl"
is "$(list_of "$T/c.db")" TIE "at the same capture time the greater list wins"
expect 0 "same capture time, a lesser list" -- "$INGEST" -q --at 2026-12-01 "$T/c.db" "$T/dnew.jsonl"
is "$(list_of "$T/c.db")" TIE "... whichever comes later"
{ dsp NEW; dsp OLD; } >"$T/dboth.jsonl"
expect 0 "one ingest, two lists" -- "$INGEST" -q --at 2026-12-02 "$T/c.db" "$T/dboth.jsonl"
is "$(list_of "$T/c.db")" OLD "within one ingest the later line's list wins"
expect 0 "host 1, 2026-12-01" -- "$INGEST" -q --at 2026-12-01 "$T/c1.db" "$T/dnew.jsonl"
expect 0 "host 2, 2026-11-01" -- "$INGEST" -q --at 2026-11-01 "$T/c2.db" "$T/dold.jsonl"
expect 0 "merge 1 then 2" -- "$MERGE" -q "$T/m12.db" "$T/c1.db" "$T/c2.db"
expect 0 "merge 2 then 1" -- "$MERGE" -q "$T/m21.db" "$T/c2.db" "$T/c1.db"
is "$(list_of "$T/m12.db") $(list_of "$T/m21.db")" "NEW NEW" "merges keep the later capture's list"
expect 0 "the older host merged into the newer" -- "$MERGE" -q "$T/c1.db" "$T/c2.db"
is "$(list_of "$T/c1.db")" NEW "a merge of an older capture into a store leaves its list"

# An empty filter value matches the empty string, never every cell.
cp "$T/c.db" "$T/empty-filter.db"
for f in --op --sku --driver --source; do
  expect 0 "prune $f ''" -- "$PRUNE" "$f" "" "$T/empty-filter.db"
  has err "removed 0 miss cells and 0 dispatch cells"
done
is "$(q "$T/empty-filter.db" "SELECT count(*) FROM dispatch_cell")" 1 "an empty filter value prunes nothing"
is "$(q "$T/empty-filter.db" "SELECT filter FROM prune_log ORDER BY ledger_id LIMIT 1")" '{"op":""}' \
   "and is logged as given"

# Summed counts are exact past 2^53 and saturate at 2^63-1, in every ranking.
{ miss a 9007199254740992; miss b 9007199254740992; miss b 1 8.9
  miss c 4611686018427387904; miss c 4611686018427387904 8.9; } >"$T/sums.jsonl"
expect 0 "counts past 2^53" -- "$INGEST" -q --at 2026-11-20 "$T/sums.db" "$T/sums.jsonl"
for args in "" "--since 2026-11-01" "--growth 7"; do
  expect 0 "fdx-top $args" -- "$TOP" -q --json $args "$T/sums.db"
  is "$(tr -d '\n' <"$T/out" | grep -o '"wanted":"[abc]","misses":[0-9]*' | tr '\n' ' ')" \
     '"wanted":"c","misses":9223372036854775807 "wanted":"b","misses":9007199254740993 "wanted":"a","misses":9007199254740992 ' \
     "fdx-top $args: exact sums, in order"
done

# A capture time in the future (a mistyped --at, a host clock ahead, a store
# merged from one) does not roll the days before it into months: the daily
# window is never counted back from past tomorrow.
recent=$(date -u -d '-3 days' +%F)
miss w5 2 >"$T/w5.jsonl"
expect 0 "an ingest 3 days ago" -- "$INGEST" -q --at "$recent" "$T/future.db" "$T/w5.jsonl"
cp "$T/future.db" "$T/future-host.db"
expect 0 "an ingest in 2099" -- "$INGEST" -q --at 2099-06-01 "$T/future.db" "$T/w5.jsonl"
is "$(q "$T/future.db" "SELECT group_concat(day || ' ' || span, ', ') FROM (SELECT * FROM miss_daily ORDER BY day)")" \
   "$recent day, 2099-06-01 day" "a day in 2099 leaves the recent days daily"
expect 0 "a host with a day in 2099" -- "$INGEST" -q --at 2099-06-01 "$T/future-bad.db" "$T/w4.jsonl"
expect 0 "merged into a store with recent days" -- "$MERGE" -q "$T/future-host.db" "$T/future-bad.db"
is "$(q "$T/future-host.db" "SELECT group_concat(DISTINCT span) FROM miss_daily")" "day" \
   "a merged store's day in 2099 leaves them daily too"

finish
