#!/usr/bin/env bash
# End-to-end checks of the fdx command-line programs: exit codes, messages,
# golden output and the store left unchanged by a failed ingest.
# Usage: cli_test.sh FDX_INGEST FDX_EXPORT DATA_DIR
set -u
INGEST=$1 EXPORT=$2 DATA=$3
NAME=cli
. "$(dirname "$0")/shlib.sh"
snapshot() { "$EXPORT" "$1" "$2" >/dev/null 2>&1 || bad "export of $1 failed"; }

MISS='{"schema":2,"wanted":"w","fallback":{"backend":"Cuda","op":"MatMul","dtypes":["F16"],"kernel_source":"k","kernel_revision_hash":1},"count":1,"hw":{"hardware_sku":"cpu","driver_version":"n/a"}}'

# --help, --version and usage errors
for tool in "$INGEST" "$EXPORT"; do
  expect 0 "help" -- "$tool" --help; has out "Usage:"
  expect 0 "version" -- "$tool" --version; has out "fdx"
  expect 2 "no arguments" -- "$tool"; has err "Try"
  expect 2 "unknown option" -- "$tool" --bogus x y; has err "unknown option"
done
expect 2 "bad --max-line-bytes" -- "$INGEST" --max-line-bytes abc "$T/db" x
expect 2 "export with one argument" -- "$EXPORT" "$T/db"
expect 2 "export to an empty OUTDIR" -- "$EXPORT" "$T/db" ""; has err "OUTDIR is empty"
# an unknown short option is named, inside a cluster too, and a long option
# given a value it does not take is told so
TOP=$(dirname "$INGEST")/fdx-top REPORT=$(dirname "$INGEST")/fdx-report
for args in "-Zq" "--cc 8.9 -Zq" "-qZ"; do
  expect 2 "fdx-top $args" -- "$TOP" $args "$T/db"; has err "unknown option '-Z'"
done
expect 2 "fdx-top --json=1" -- "$TOP" --json=1 "$T/db"; has err "option '--json' takes no value"
for cc in 89 "" 8.9.1 08.9 " 8.9" 99999999999.0; do  # fdx-prune's rule: they match nothing
  expect 2 "fdx-top --cc '$cc'" -- "$TOP" --cc "$cc" "$T/db"; has err "neither 'cpu' nor MAJOR.MINOR"
done
expect 2 "fdx-report -n without a value" -- "$REPORT" "$T/db" "$T/o.html" -n
has err "option '-n' needs a value"
expect 2 "fdx-report of a feed" -- "$REPORT" "$DATA/basic/input/run_0000/misses.jsonl" "$T/o.html"
expect 1 "an invalid run id" -- "$INGEST" --run-id "$(printf 'r\376')" "$T/runid.db" /dev/null
has err "$T/runid.db: run id: invalid UTF-8"
case "$(cat "$T/err")" in *"bad line"*) bad "a refused run id is reported as bad lines" ;; *) ok ;; esac

# golden vectors, run by run and all at once
for v in basic nasty; do
  for r in "$DATA/$v"/input/run_*; do
    expect 0 "ingest $r" -- "$INGEST" "$T/$v-1.db" "$r"
  done
  expect 0 "ingest $v at once" -- "$INGEST" "$T/$v-2.db" "$DATA/$v"/input/run_*
  has err "cells added"
  for db in 1 2; do
    expect 0 "export $v" -- "$EXPORT" "$T/$v-$db.db" "$T/$v-out$db/sub"
    has err "misses.jsonl: "
    same "$T/$v-out$db/sub/misses.jsonl" "$DATA/$v/expected/misses.jsonl"
    same "$T/$v-out$db/sub/dispatches.jsonl" "$DATA/$v/expected/dispatches.jsonl"
  done
done

# standard input and a single file holding both kinds
cat "$DATA"/basic/input/run_0000/*.jsonl >"$T/mixed.jsonl"
expect 0 "stdin" -- "$INGEST" "$T/stdin.db" - <"$DATA/basic/input/run_0001/misses.jsonl"
expect 0 "mixed file" -- "$INGEST" "$T/stdin.db" "$T/mixed.jsonl" "$DATA/basic/input/run_0001/dispatches.jsonl"
expect 0 "export" -- "$EXPORT" "$T/stdin.db" "$T/stdin-out"
same "$T/stdin-out/misses.jsonl" "$DATA/basic/expected/misses.jsonl"
same "$T/stdin-out/dispatches.jsonl" "$DATA/basic/expected/dispatches.jsonl"

# a bad feed: every bad line listed (capped), exit 1, store unchanged
snapshot "$T/basic-1.db" "$T/before"
{ echo "$MISS"; for i in $(seq 1 30); do echo '{"schema":2,"wanted":"w","count":-3}'; done; } >"$T/bad.jsonl"
expect 1 "bad feed" -- "$INGEST" "$T/basic-1.db" "$DATA/basic/input/run_0000" "$T/bad.jsonl"
has err "$T/bad.jsonl:2: fallback: missing"
has err "$T/bad.jsonl:21: fallback: missing"
has err "... and 10 more bad lines"
has err "30 bad lines: nothing ingested"
if grep -q "bad.jsonl:22:" "$T/err"; then bad "cap not applied"; else ok; fi
snapshot "$T/basic-1.db" "$T/after"
same "$T/before/misses.jsonl" "$T/after/misses.jsonl"
same "$T/before/dispatches.jsonl" "$T/after/dispatches.jsonl"
expect 1 "bad feed, all errors" -- "$INGEST" --max-errors 0 "$T/basic-1.db" "$T/bad.jsonl"
has err "$T/bad.jsonl:31: fallback: missing"

# a bad line in a new store leaves no store behind
expect 1 "bad feed into new store" -- "$INGEST" "$T/new.db" "$T/bad.jsonl"
expect 1 "export of the store the failed ingest removed" -- "$EXPORT" "$T/new.db" "$T/new-out"
has err "no such store"

# over-long lines
expect 1 "long line" -- "$INGEST" --max-line-bytes 50 "$T/long.db" "$T/mixed.jsonl"
has err "line longer than 50 bytes, the limit, which fdx-ingest --max-line-bytes"

# missing inputs and outputs
expect 1 "missing path" -- "$INGEST" "$T/basic-1.db" "$T/nope.jsonl"
has err "nope.jsonl"
mkdir -p "$T/emptyrun"
expect 1 "empty run dir" -- "$INGEST" "$T/basic-1.db" "$T/emptyrun"
has err "neither misses.jsonl nor dispatches.jsonl"
# a run's feed that is a symlink to nothing went missing: not a run without misses
mkdir -p "$T/linkrun"
cp "$DATA"/basic/input/run_0000/dispatches.jsonl "$T/linkrun/"
ln -s "$T/gone/misses.jsonl" "$T/linkrun/misses.jsonl"
expect 1 "run dir with a dangling link" -- "$INGEST" --run-id linkrun "$T/linkrun.db" "$T/linkrun"
has err "linkrun/misses.jsonl: a symbolic link to nothing"
if [ -e "$T/linkrun.db" ]; then bad "a refused first ingest left its store"; else ok; fi
# a message shows the control characters it quotes (a feed's text, a file
# name) as escapes: a line could otherwise erase lines or forge file:line rows
printf '%s\n' '{"schema":2,"wanted":"a","\u001b[2K\rruns/9/misses.jsonl:1: fine\n":1,"\u001b[2K\rruns/9/misses.jsonl:1: fine\n":2}' >"$T/evil.jsonl"
evil=$(printf '%s/ev\nil\033[31m.jsonl' "$T")
cp "$T/evil.jsonl" "$evil"
expect 1 "a line whose text holds control characters" -- "$INGEST" "$T/evil.db" "$evil"
has err 'ev\nil\x1b[31m.jsonl:1:'
has err '\x1b[2K\rruns/9/misses.jsonl:1: fine\n'
if LC_ALL=C grep -q "$(printf '[\033\r]')" "$T/err"; then bad "a control character reached stderr"; else ok; fi
printf '{"schema":1,"wanted":"a"}\n' >"$evil"
expect 1 "a schema-1 line in a file whose name holds control characters" -- "$INGEST" "$T/evil.db" "$evil"
has err 'ev\nil\x1b[31m.jsonl: 1 line of wire schema 1'
if LC_ALL=C grep -q "$(printf '[\033\r]')" "$T/err"; then bad "a control character reached stderr"; else ok; fi
expect 1 "export of a missing store" -- "$EXPORT" "$T/missing.db" "$T/x"
has err "no such store"
if [ -e "$T/missing.db" ]; then bad "export created a store"; else ok; fi
echo "just some text, not a database at all; long enough to be read as a header" >"$T/afile"
expect 1 "export into a file" -- "$EXPORT" "$T/basic-1.db" "$T/afile"
has err "not a directory"
expect 1 "ingest into a non-store" -- "$INGEST" "$T/afile" "$T/mixed.jsonl"
expect 1 "quiet" -- "$INGEST" -q "$T/afile" "$T/mixed.jsonl"
expect 0 "quiet success" -- "$INGEST" -q "$T/q.db" "$T/mixed.jsonl"
if [ -s "$T/err" ]; then bad "--quiet printed"; else ok; fi
# libpq is loaded when a PostgreSQL store opens; without it, only those fail
expect 1 "PostgreSQL store without libpq" -- env FDX_LIBPQ="$T/nolibpq.so" \
  "$EXPORT" "postgresql://u:s3cr3t-pw@/db?host=$T" "$T/pg-out"
has err "PostgreSQL stores need libpq: cannot load $T/nolibpq.so"
if grep -q "s3cr3t" "$T/err"; then bad "password shown"; else ok; fi
expect 0 "SQLite store without libpq" -- env FDX_LIBPQ="$T/nolibpq.so" "$EXPORT" "$T/q.db" "$T/q-out"

# exactly-once ingest with --run-id, and the ledger
R="$DATA/basic/input/run_0000"
expect 0 "run id, first" -- "$INGEST" --run-id r-1 "$T/ledger.db" "$R"
snapshot "$T/ledger.db" "$T/l1"
expect 0 "run id, again" -- "$INGEST" --run-id r-1 "$T/ledger.db" "$R"
has err "run id 'r-1' was already ingested"
has err "nothing to do"
snapshot "$T/ledger.db" "$T/l2"
same "$T/l1/misses.jsonl" "$T/l2/misses.jsonl"
same "$T/l1/dispatches.jsonl" "$T/l2/dispatches.jsonl"
expect 1 "run id, other content" -- "$INGEST" --run-id r-1 "$T/ledger.db" "$DATA/basic/input/run_0001"
has err "$T/ledger.db: run id 'r-1' was already ingested"
has err "with different content"
expect 0 "same content, no run id" -- "$INGEST" "$T/ledger.db" "$R"
has err "warning: $R/misses.jsonl: same content as $R/misses.jsonl"
expect 0 "ledger by SQL" -- sqlite3 "$T/ledger.db" \
  "SELECT count(*), sum(run_id IS NOT NULL), sum(lines), min(content_hash = (SELECT content_hash FROM ingest_ledger WHERE id = 1)) FROM ingest_ledger"
has out "2|1|18|1"
expect 0 "ledger sources" -- sqlite3 "$T/ledger.db" "SELECT count(*), sum(records) FROM ingest_source"
has out "4|18"

# --skip-invalid and --rejects
{ echo "$MISS"; echo 'not json'; echo '{"schema":1}'; echo "$MISS"; } >"$T/some-bad.jsonl"
expect 2 "rejects without skip" -- "$INGEST" --rejects "$T/rej" "$T/skip.db" "$T/some-bad.jsonl"
expect 0 "skip invalid" -- "$INGEST" --skip-invalid --rejects "$T/rej" "$T/skip.db" "$T/some-bad.jsonl"
has err "some-bad.jsonl:2: not a JSON object"
has err "some-bad.jsonl: 1 line of wire schema 1 (line 3)"
has err "skipped 2 bad lines, copied to $T/rej"
printf 'not json\n{"schema":1}\n' >"$T/rej-want"
same "$T/rej" "$T/rej-want"
expect 0 "export skip" -- "$EXPORT" "$T/skip.db" "$T/skip-out"
has err "misses.jsonl: 1 lines"
if grep -q '"count":2' "$T/skip-out/misses.jsonl"; then ok; else bad "good lines not ingested"; fi
# schema-1 lines among other bad lines: one message for the file, naming its lines truly
{ echo '{"schema":1}'; echo 'bad'; echo '{"schema":1}'; echo 'bad'; echo '{"schema":1}'; echo "$MISS"; } >"$T/s1-mixed.jsonl"
expect 0 "schema 1 among bad lines" -- "$INGEST" --skip-invalid "$T/s1-mixed.db" "$T/s1-mixed.jsonl"
has err "s1-mixed.jsonl: 3 lines of wire schema 1 (the first line 1, the last 5)"
if [ "$(grep -c 'wire schema 1' "$T/err")" = 1 ]; then ok; else bad "schema-1 lines told more than once"; cat "$T/err" >&2; fi
# standard input is read once: a second - is a usage error, not a false warning
expect 2 "stdin twice" -- "$INGEST" "$T/stdin-twice.db" - - <"$T/some-bad.jsonl"
has err "standard input (-) given more than once"
# a closed standard input is not an empty feed (a cron job's would ingest nothing)
expect 2 "fdx-ingest - with standard input closed" -- \
  sh -c 'exec "$1" "$2" - <&-' sh "$INGEST" "$T/closed-stdin.db"
has err "standard input (-) is closed"
[ ! -e "$T/closed-stdin.db" ] && ok || bad "a closed standard input made a store"

# --rejects never names the store or an input (by device and inode): refused
# before anything is opened for writing, nothing changed
cp "$T/skip.db" "$T/guard.db"
snapshot "$T/guard.db" "$T/guard-before"
rm -f "$T/guard.db-wal" "$T/guard.db-shm" # the reader may leave them, empty
cp "$T/some-bad.jsonl" "$T/guard-in.jsonl"
ln "$T/guard-in.jsonl" "$T/guard-hard"
ln -s "$T/guard-in.jsonl" "$T/guard-soft"
for r in guard.db guard.db-wal guard.db-shm guard-in.jsonl guard-hard guard-soft; do
  [ -e "$T/$r" ] && cp -p "$T/$r" "$T/$r.orig"
  expect 2 "rejects = $r" -- "$INGEST" --skip-invalid --rejects "$T/$r" "$T/guard.db" "$T/guard-in.jsonl"
  has err "the rejects file must be another file"
  if [ -e "$T/$r.orig" ]; then same "$T/$r" "$T/$r.orig"; rm "$T/$r.orig"; fi
done
if [ -e "$T/guard.db-wal" ]; then bad "refused ingest left a WAL file"; else ok; fi
expect 2 "rejects = store by another name" -- "$INGEST" --skip-invalid --rejects "$T/./guard.db" "$T/guard.db" "$T/guard-in.jsonl"
# a store named through a symlink has its -wal beside the file it names
ln -s "$T/guard.db" "$T/guard-link.db"
expect 2 "rejects = the -wal of a store named by a link" -- "$INGEST" --skip-invalid --rejects "$T/guard.db-wal" "$T/guard-link.db" "$T/guard-in.jsonl"
has err "the rejects file must be another file"
mkdir -p "$T/guard-run" && cp "$T/some-bad.jsonl" "$T/guard-run/misses.jsonl"
expect 2 "rejects = a run directory's file" -- "$INGEST" --skip-invalid --rejects "$T/guard-run/misses.jsonl" "$T/guard.db" "$T/guard-run"
same "$T/guard-run/misses.jsonl" "$T/some-bad.jsonl"
expect 2 "rejects = standard input" -- "$INGEST" --skip-invalid --rejects "$T/guard-hard" "$T/guard.db" - <"$T/guard-in.jsonl"
same "$T/guard-in.jsonl" "$T/some-bad.jsonl"
expect 2 "rejects = a new store's name" -- "$INGEST" --skip-invalid --rejects "$T/guard-new.db" "$T/guard-new.db" "$T/guard-in.jsonl"
if [ -e "$T/guard-new.db" ]; then bad "refused ingest created the store"; else ok; fi
snapshot "$T/guard.db" "$T/guard-after"
same "$T/guard-before/misses.jsonl" "$T/guard-after/misses.jsonl"

# --rejects is replaced only when the ingest commits: a no-op retry under the
# same --run-id, and a failed ingest, leave the first run's file as it was
expect 0 "rejects, first run" -- "$INGEST" --run-id rj-1 --skip-invalid --rejects "$T/rj1" "$T/rj.db" "$T/some-bad.jsonl"
same "$T/rj1" "$T/rej-want"
expect 0 "rejects, no-op retry" -- "$INGEST" --run-id rj-1 --skip-invalid --rejects "$T/rj1" "$T/rj.db" "$T/some-bad.jsonl"
has err "nothing to do"
same "$T/rj1" "$T/rej-want"
printf 'kept\n' >"$T/rj2" && cp "$T/rj2" "$T/rj2-want"
expect 1 "rejects, failed ingest" -- "$INGEST" --skip-invalid --rejects "$T/rj2" "$T/rj.db" "$T/some-bad.jsonl" "$T/nope.jsonl"
same "$T/rj2" "$T/rj2-want"
if ls -A "$T" | grep -q fdx-tmp; then bad "temporary rejects file left behind"; else ok; fi
expect 0 "rejects, clean input" -- "$INGEST" --skip-invalid --rejects "$T/rj1" "$T/rj.db" "$T/mixed.jsonl"
if [ -e "$T/rj1" ] && [ ! -s "$T/rj1" ]; then ok; else bad "clean ingest did not empty the rejects file"; fi

# a symbolic link is refused: the rename would replace the link (--rejects
# /dev/stdout replaced the system's link), not write what it names
printf 'elsewhere\n' >"$T/rj-target" && ln -s "$T/rj-target" "$T/rj-link"
expect 2 "rejects, a symbolic link" -- "$INGEST" --skip-invalid --rejects "$T/rj-link" "$T/rj.db" "$T/some-bad.jsonl"
has err "rj-link: is a symbolic link"
if [ -L "$T/rj-link" ]; then ok; else bad "symbolic link replaced"; fi
if [ "$(cat "$T/rj-target")" = elsewhere ]; then ok; else bad "link target changed"; fi

# the same file given twice (under any name) is counted twice, with a warning
ln "$T/mixed.jsonl" "$T/mixed-link.jsonl"
expect 0 "same file twice" -- "$INGEST" "$T/twice.db" "$T/mixed.jsonl" "$T/mixed-link.jsonl"
has err "warning: $T/mixed-link.jsonl: same file as $T/mixed.jsonl, given earlier"
expect 0 "distinct files" -- "$INGEST" "$T/twice2.db" "$DATA/basic/input/run_0000" "$DATA/basic/input/run_0001"
if grep -q "same file as" "$T/err"; then bad "distinct files reported as one"; else ok; fi

# nesting limit
printf '{"schema":2,"x":[[[[[[1]]]]]]}\n' >"$T/deep.jsonl"
expect 1 "too deep" -- "$INGEST" "$T/deep.db" "$T/deep.jsonl"
has err "nesting deeper than 5 levels"
expect 1 "deeper allowed, still not a record" -- "$INGEST" --max-depth 8 "$T/deep.db" "$T/deep.jsonl"
has err "missing"
expect 2 "bad --max-depth" -- "$INGEST" --max-depth 0 "$T/deep.db" "$T/deep.jsonl"

# an output named near a file name's 255 bytes: its temporary file's name is
# cut to fit, and the output is written
long=$(printf 'r%.0s' $(seq 250)).html
expect 0 "fdx-report to a 255-byte name" -- "$REPORT" -q "$T/basic-2.db" "$T/$long"
[ -s "$T/$long" ] && ok || bad "the page with a 255-byte name was not written"
[ -z "$(ls -A "$T" | grep fdx-tmp)" ] && ok || bad "a temporary file was left"

# the store's own files are not feeds: refused, nothing recorded, no store made
cp "$T/basic-2.db" "$T/own.db"
for f in own.db own.db-wal; do
  expect 1 "ingest $f into own.db" -- "$INGEST" "$T/own.db" "$T/$f"; has err "not a feed to ingest"
done
expect 1 "ingest own.db from standard input" -- \
  sh -c 'exec "$1" --skip-invalid "$2" - < "$2"' sh "$INGEST" "$T/own.db"
has err "<stdin>: is the store"
cmp -s "$T/own.db" "$T/basic-2.db" && ok || bad "a refused input changed the store"
expect 1 "a new store as its own input" -- "$INGEST" "$T/own-new.db" "$T/own-new.db"
[ ! -e "$T/own-new.db" ] && ok || bad "the refused ingest left a store"

# an option that takes one value, given twice, is refused rather than the
# first silently dropped; an empty store path is a usage error
expect 2 "fdx-top --op twice" -- "$TOP" --op A --op B "$T/basic-2.db"; has err "--op given twice"
for twice in "--since 2026-01-01 --since 2026-02-01" "--until 2026-02-01 --until 2026-03-01" \
             "--growth 7d --growth 3d"; do
  expect 2 "fdx-top $twice" -- "$TOP" $twice "$T/basic-2.db"; has err "given twice"
done
expect 2 "fdx-ingest --at twice" -- "$INGEST" --at 2026-01-01 --at 2026-01-02 "$T/twice-value.db" /dev/null
has err "--at given twice"
expect 2 "fdx-ingest --rejects twice" -- \
  "$INGEST" --skip-invalid --rejects "$T/r1" --rejects "$T/r2" "$T/twice-value.db" /dev/null
has err "--rejects given twice"
[ ! -e "$T/twice-value.db" ] && ok || bad "a refused option made a store"
expect 2 "fdx-export --kind twice" -- "$EXPORT" --kind misses --kind dispatches "$T/basic-2.db" -
has err "--kind given twice"
expect 2 "fdx-ingest --run-id twice" -- "$INGEST" --run-id a --run-id b "$T/twice-opt.db" /dev/null
has err "--run-id given twice"
# every other option that takes a value, in every program: none silently
# takes the last of two
BIN=$(dirname "$INGEST")
cp "$T/basic-2.db" "$T/basic-2.db.before"
while read -r prog opt a b rest; do
  # shellcheck disable=SC2086 # rest holds the program's arguments, split on purpose
  expect 2 "$prog $opt twice" -- "$BIN/$prog" "$opt" "$a" "$opt" "$b" $rest
  has err "${opt} given twice"
  cmp -s "$T/basic-2.db" "$T/basic-2.db.before" && ok || bad "$prog $opt twice changed the store"
done <<EOF_TWICE
fdx-ingest --max-errors 1 2 $T/basic-2.db /dev/null
fdx-ingest --max-line-bytes 100 200 $T/basic-2.db /dev/null
fdx-ingest --max-depth 3 4 $T/basic-2.db /dev/null
fdx-ingest --busy-timeout 1 2 $T/basic-2.db /dev/null
fdx-ingest --threads 1 2 $T/basic-2.db /dev/null
fdx-ingest --daily-days 3 4 $T/basic-2.db /dev/null
fdx-export --busy-timeout 1 2 $T/basic-2.db $T/twice-out
fdx-merge --busy-timeout 1 2 $T/basic-2.db $T/basic-2.db
fdx-prune --busy-timeout 1 2 -n --op A $T/basic-2.db
fdx-diff --top 1 2 $T/basic-2.db $T/basic-2.db
fdx-top --top 1 2 $T/basic-2.db
fdx-report --top 1 2 $T/basic-2.db $T/twice.html
fdx-report --busy-timeout 1 2 $T/basic-2.db $T/twice.html
EOF_TWICE
[ ! -e "$T/twice-out" ] && [ ! -e "$T/twice.html" ] && ok || bad "a refused option wrote output"
[ ! -e "$T/twice-opt.db" ] && ok || bad "a refused option made a store"
expect 2 "fdx-diff with an empty path" -- "$(dirname "$INGEST")/fdx-diff" "$T/basic-2.db" ""
has err "path is empty"
expect 2 "fdx-ingest with an empty store path" -- "$INGEST" "" /dev/null; has err "path is empty"
expect 2 "fdx-ingest with an empty PATH" -- "$INGEST" "$T/empty-path.db" ""; has err "PATH is empty"
expect 2 "fdx-merge with an empty source" -- "$(dirname "$INGEST")/fdx-merge" "$T/empty-path.db" ""
has err "path is empty"
[ ! -e "$T/empty-path.db" ] && ok || bad "an empty path made a store"
expect 2 "fdx-report to an empty OUT.html" -- "$REPORT" "$T/basic-2.db" ""
has err "OUT.html is empty"
expect 2 "fdx-report to -, which is not standard output" -- \
  sh -c 'cd "$1" && "$2" basic-2.db -' sh "$T" "$REPORT"
has err "not standard output"
if [ -e "$T/-" ]; then bad "fdx-report DB - wrote a file named -"; else ok; fi
# a store without its identity is named so by the report, as by merge and prune
cp "$T/basic-2.db" "$T/noid.db" && sqlite3 "$T/noid.db" "DELETE FROM store_identity"
expect 1 "fdx-report of a store without identity" -- "$REPORT" "$T/noid.db" "$T/noid.html"
has err "has no store identity"
# a page or a feed whose path is another store's (a slip of the arguments)
cp "$T/basic-2.db" "$T/other.db"
expect 1 "fdx-report over another store" -- "$REPORT" "$T/basic-2.db" "$T/other.db"
has err "is an SQLite database"
mkdir -p "$T/over" && cp "$T/basic-2.db" "$T/over/dispatches.jsonl"
expect 1 "fdx-export over another store" -- "$EXPORT" "$T/basic-2.db" "$T/over"
cmp -s "$T/basic-2.db" "$T/other.db" && cmp -s "$T/basic-2.db" "$T/over/dispatches.jsonl" &&
  [ ! -e "$T/over/misses.jsonl" ] && ok || bad "a refused output replaced a store"

# a failed export leaves no directory it made; a feed appended to the store
# itself (a shell's >>) is refused before a byte is written
cp "$T/basic-2.db" "$T/crafted.db"
sqlite3 "$T/crafted.db" "PRAGMA ignore_check_constraints = 1;
  UPDATE miss_cell SET wanted = CAST(x'ff' AS TEXT) WHERE wanted = (SELECT min(wanted) FROM miss_cell)"
mkdir "$T/kept"
expect 1 "export of a crafted store into new directories" -- "$EXPORT" "$T/crafted.db" "$T/made/a/b"
has err "invalid UTF-8"
[ ! -e "$T/made" ] && ok || bad "the failed export left the directories it made"
expect 1 "export of a crafted store below a directory" -- "$EXPORT" "$T/crafted.db" "$T/kept/a"
[ -d "$T/kept" ] && [ -z "$(ls -A "$T/kept")" ] && ok || bad "the failed export left $T/kept/a"
cp "$T/basic-2.db" "$T/appended.db"
for suffix in "" -wal; do
  "$EXPORT" "$T/appended.db" - --kind misses >>"$T/appended.db$suffix" 2>"$T/err"
  [ $? -eq 2 ] && ok || bad "a feed appended to the store's file$suffix: not refused"
  has err "standard output is the store"
done
# so does every program that prints (fdx-top and fdx-diff wrote into it)
"$TOP" "$T/appended.db" 1<>"$T/appended.db" 2>"$T/err"
[ $? -eq 2 ] && ok || bad "fdx-top printing into its store: not refused"
has err "standard output is the store"
"$(dirname "$INGEST")/fdx-diff" "$T/basic-2.db" "$T/appended.db" >>"$T/appended.db" 2>"$T/err"
[ $? -eq 2 ] && ok || bad "fdx-diff printing into its store B: not refused"
cmp -s "$T/appended.db" "$T/basic-2.db" && ok || bad "the store was written to by its own export"

# output that cannot all be written is a failure, said, whatever the program
# writes: a script reading a cut ranking or comparison takes it for the whole
DIFF=$(dirname "$INGEST")/fdx-diff
for cmd in "$TOP $T/basic-2.db" "$TOP --json $T/basic-2.db" "$TOP --sql $T/basic-2.db" \
           "$DIFF $T/basic-1.db $T/stdin.db" "$DIFF --json $T/basic-1.db $T/stdin.db" \
           "$INGEST --help" "$EXPORT --version" "$REPORT --help"; do
  $cmd >/dev/full 2>"$T/err"
  [ $? -eq 1 ] && ok || bad "$cmd into a full device: exit $?, want 1"
  has err "standard output: No space left on device"
  $cmd >&- 2>"$T/err"
  [ $? -eq 1 ] && ok || bad "$cmd with standard output closed: exit $?, want 1"
done
expect 1 "a feed to a full device" -- sh -c 'exec "$1" "$2" - --kind misses >/dev/full' sh \
  "$EXPORT" "$T/basic-2.db"
has err "basic-2.db: writing the misses feed to its stream: No space left on device"

# cells that differ only in their backend are told apart in fdx-diff's table
printf '%s\n' "$MISS" "${MISS/Cuda/Vulkan}" >"$T/backends.jsonl"
expect 0 "ingest two backends" -- "$INGEST" -q "$T/backends.db" "$T/backends.jsonl"
expect 0 "an empty store" -- "$INGEST" -q "$T/backend-none.db" /dev/null
expect 0 "fdx-diff of two backends" -- "$DIFF" "$T/backend-none.db" "$T/backends.db"
has out "  w  Cuda/MatMul(F16)  k "
has out "  w  Vulkan/MatMul(F16)  k "
# and so are values the column would run together: a SKU and a driver split
# at another space, a key named as an unkeyed dispatch is shown
printf '%s\n' "${MISS/\"cpu\"/\"SKU X\"}" \
  "$(printf '%s' "$MISS" | sed 's/"cpu","driver_version":"n\/a"/"SKU","driver_version":"X n\/a"/')" \
  "${MISS/\"w\"/\"(unkeyed)\"}" >"$T/runs-together.jsonl"
expect 0 "ingest values that run together" -- "$INGEST" -q "$T/together.db" "$T/runs-together.jsonl"
expect 0 "fdx-diff of values that run together" -- "$DIFF" "$T/backend-none.db" "$T/together.db"
has out ' "SKU X" "n/a"'
has out ' SKU "X n/a"'
has out ' "(unkeyed)"  Cuda/MatMul(F16) '
# dtypes that join alike ("F16,F32" one dtype or two; none, or one empty) are
# told apart, in the table and in --json; so are a key's ops that join alike
printf '%s\n' "${MISS/\"F16\"/\"F16,F32\"}" "${MISS/\"F16\"/\"F16\",\"F32\"}" \
  "${MISS/\"F16\"/}" "${MISS/\"F16\"/\"\"}" "${MISS/\"F16\"/\"F16) x\"}" \
  "$(printf '%s' "${MISS/\"w\"/\"one\"}" | sed 's/"MatMul"/"A,B"/')" \
  "$(printf '%s' "${MISS/\"w\"/\"two\"}" | sed 's/"MatMul"/"A"/')" \
  "$(printf '%s' "${MISS/\"w\"/\"two\"}" | sed 's/"MatMul"/"B"/')" \
  "$(printf '%s' "${MISS/\"w\"/\"three\"}" | sed 's/"MatMul"/"[\\"\\"]"/')" \
  "$(printf '%s' "${MISS/\"w\"/\"four\"}" | sed 's/"MatMul"/""/')" >"$T/dtypes.jsonl"
expect 0 "ingest dtypes that join alike" -- "$INGEST" -q "$T/dtypes.db" "$T/dtypes.jsonl"
expect 0 "fdx-diff of dtypes that join alike" -- "$DIFF" -n 0 "$T/backend-none.db" "$T/dtypes.db"
has out '  w  Cuda/MatMul(F16,F32)  k '
has out '  w  Cuda/MatMul("[\"F16,F32\"]")  k '
has out '  w  Cuda/MatMul()  k '
has out '  w  Cuda/MatMul("[\"\"]")  k '
has out '  w  Cuda/MatMul("F16) x")  k '
expect 0 "fdx-diff --json of dtypes that join alike" -- "$DIFF" --json -n 0 "$T/backend-none.db" \
  "$T/dtypes.db"
has out '"dtypes":"[\"F16,F32\"]"'
has out '"dtypes":"F16,F32"'
expect 0 "fdx-top of ops that join alike" -- "$TOP" --json -n 0 "$T/dtypes.db"
has out '"wanted":"one","misses":1,"fallbacks":1,"devices":1,"ops":"[\"A,B\"]"'
has out '"wanted":"two","misses":2,"fallbacks":2,"devices":1,"ops":"A,B"'
has out '"wanted":"three","misses":1,"fallbacks":1,"devices":1,"ops":"[\"[\\\"\\\"]\"]"'
has out '"wanted":"four","misses":1,"fallbacks":1,"devices":1,"ops":"[\"\"]"'

# a store its user may not read: the system's reason is said
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  mkdir -m 755 "$T/perm" && cp "$T/basic-2.db" "$T/perm/s.db" && chmod 600 "$T/perm/s.db"
  chmod 755 "$T"
  expect 1 "fdx-top of a store it may not read" -- \
    setpriv --reuid=65534 --regid=65534 --clear-groups "$TOP" "$T/perm/s.db"
  has err "(Permission denied)"
fi

finish
