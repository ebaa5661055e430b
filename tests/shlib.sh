# What the shell test scripts share: a scratch directory, counted checks.
# Source it after setting NAME; $T is the scratch directory.
T=$(mktemp -d "${TMPDIR:-/tmp}/fdx-$NAME-XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# expect CODE DESCRIPTION -- COMMAND...: runs COMMAND, output in $T/out, $T/err
expect() {
  local want=$1 what=$2; shift 3
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, want $want"; cat "$T/err" >&2; fi
}
has() { if grep -qF -- "$2" "$T/$1"; then ok; else bad "$1 lacks '$2'"; cat "$T/$1" >&2; fi; }
same() { if cmp -s "$1" "$2"; then ok; else bad "$1 differs from $2"; diff "$1" "$2" | head >&2; fi; }
# finish: the summary line, and the exit status
finish() {
  echo "$NAME: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
