#!/usr/bin/env bash
# Every program has a man page that renders without warnings and documents
# every option its --help lists, and a bash completion that offers every one
# of those options and completes their values and the operands; fdx(7)
# describes every table and view the schema creates.
# Usage: docs_test.sh MAN_DIR SQL_DIR COMPLETION_SCRIPT TOOL_PROGRAM...
set -u
MAN=$(realpath "$1") SQL=$(realpath "$2") COMPLETION=$(realpath "$3")
shift 3
NAME=docs
. "$(dirname "$0")/shlib.sh"

# The options --help lists: the first column of each line under "Options:".
help_options() {
  "$1" --help | sed -n '/^Options:/,/^$/p' | grep -E '^ +-' | sed -E 's/^ +//; s/  .*//' |
    grep -oE -- '--?[A-Za-z][A-Za-z-]*'
}

# The completion's candidates for the words given, one a line; the last word
# is the one being completed.
complete_words() {
  bash -c '
    source "$1" || exit 1
    shift
    spec=$(complete -p "$1") || exit 1
    fn=$(sed -E "s/.*-F ([^ ]+) .*/\1/" <<<"$spec")
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    "$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf "%s\n" "${COMPREPLY[@]}"
  ' complete_words "$COMPLETION" "$@"
}
# offers DESCRIPTION WANTED -- WORDS...: the completion of WORDS includes WANTED.
offers() {
  local what=$1 want=$2
  shift 3
  complete_words "$@" >"$T/words" || { bad "$what: completion failed"; return; }
  if grep -qxF -- "$want" "$T/words"; then ok; else bad "$what: '$want' not offered"; fi
}
# lacks DESCRIPTION UNWANTED -- WORDS...: the completion of WORDS does not include UNWANTED.
lacks() {
  local what=$1 unwanted=$2
  shift 3
  complete_words "$@" >"$T/words" || { bad "$what: completion failed"; return; }
  if grep -qxF -- "$unwanted" "$T/words"; then bad "$what: '$unwanted' offered"; else ok; fi
}

command -v man >/dev/null && command -v groff >/dev/null ||
  { echo "FAIL: man and groff are needed (scripts/deps.sh installs them)" >&2; exit 1; }

tools=()
progs=()
for prog in "$@"; do progs+=("$(realpath "$prog")"); done
for prog in "${progs[@]}"; do
  tool=$(basename "$prog")
  tools+=("$tool")
  page=$MAN/$tool.1
  if [ ! -f "$page" ]; then
    bad "$tool has no man page $page"
    continue
  fi
  ok
  version=$("$prog" --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1)
  if grep -q "^\.TH .* \"fdx $version\"" "$page"; then ok; else
    bad "$page does not name fdx $version in its .TH line"
  fi
  # The page's text with roff's escapes for '-' and fonts removed.
  sed -E 's/\\-/-/g; s/\\f[BIRP]//g' "$page" >"$T/page"
  mapfile -t opts < <(help_options "$prog")
  [ "${#opts[@]}" -ge 3 ] || bad "$tool --help lists only ${#opts[*]} options"
  complete_words "$tool" - >"$T/offered" || bad "$tool: no completion in $COMPLETION"
  for opt in "${opts[@]}"; do
    if grep -qE -- "(^|[^-A-Za-z])$opt([^-A-Za-z]|\$)" "$T/page"; then ok; else
      bad "$tool: $opt is not in $page"
    fi
    if grep -qxF -- "$opt" "$T/offered"; then ok; else bad "$tool: completion lacks $opt"; fi
  done
  # Nothing offered that the program does not take.
  while read -r offered; do
    if printf '%s\n' "${opts[@]}" | grep -qxF -- "$offered"; then ok; else
      bad "$tool: completion offers $offered, which --help does not list"
    fi
  done <"$T/offered"
done

# Every page renders cleanly, and every section-1 page is a program's.
for page in "$MAN"/*.[1-8]; do
  if groff -ww -z -man "$page" 2>"$T/err" && [ ! -s "$T/err" ]; then ok; else
    bad "groff warns on $page:"; cat "$T/err" >&2
  fi
  if MANWIDTH=80 man --warnings -l "$page" 2>"$T/err" >"$T/out" && [ ! -s "$T/err" ] &&
     grep -q "^NAME" "$T/out"; then ok; else
    bad "man warns on $page:"; cat "$T/err" >&2
  fi
  case $page in
  *.1) printf '%s\n' "${tools[@]}" | grep -qxF "$(basename "$page" .1)" && ok ||
         bad "$page documents no program under test" ;;
  esac
done
[ -f "$MAN/fdx.7" ] && ok || bad "no fdx.7 for the store's tables and views"
grep -q "^\.TH .* \"fdx ${version:-}\"" "$MAN/fdx.7" && ok || bad "fdx.7 does not name fdx ${version:-}"
# The tables and views each file leaves behind: one a migration creates and
# drops (or renames away) again itself is scaffolding, not part of the store.
relations_left() {
  awk '
    match($0, /^CREATE (TABLE|VIEW) (IF NOT EXISTS )?[a-z0-9_]+/) {
      n = split(substr($0, RSTART, RLENGTH), w, " "); made[w[n]] = ++order; next
    }
    match($0, /^(DROP (TABLE|VIEW) (IF EXISTS )?|ALTER TABLE )[a-z0-9_]+/) {
      n = split(substr($0, RSTART, RLENGTH), w, " ")
      if ($0 ~ /^ALTER/ && $0 !~ / RENAME TO /) next
      delete made[w[n]]
    }
    END { for (name in made) print made[name], name }
  ' "$1" | sort -n | cut -d" " -f2
}
mapfile -t relations < <(for f in "$SQL"/schema_*.sql "$SQL"/views.sql; do relations_left "$f"; done)
[ "${#relations[@]}" -ge 10 ] && ok || bad "only ${#relations[*]} tables and views in $SQL"
for name in "${relations[@]}"; do
  grep -qE "^\.(SS|TP|B) $name\$" "$MAN/fdx.7" 2>/dev/null && ok || bad "fdx.7 does not describe $name"
done

# Values and operands.
mkdir -p "$T/w/runs/0001" "$T/w/out"
touch "$T/w/t.db" "$T/w/bad.jsonl"
cd "$T/w"
offers "ingest DB" t.db -- fdx-ingest ''
offers "ingest PATH: run directories" runs -- fdx-ingest t.db r
offers "ingest --rejects FILE" bad.jsonl -- fdx-ingest --skip-invalid --rejects b
offers "ingest --rejects=FILE" bad.jsonl -- fdx-ingest --skip-invalid --rejects = b
lacks "ingest --run-id takes no file" t.db -- fdx-ingest --run-id ''
lacks "ingest --threads takes no file" t.db -- fdx-ingest --threads ''
offers "export DB" t.db -- fdx-export ''
offers "export OUTDIR" out -- fdx-export t.db ''
lacks "export OUTDIR is a directory" t.db -- fdx-export t.db ''
lacks "export OUTDIR after --busy-timeout MS" t.db -- fdx-export --busy-timeout 5 t.db ''
offers "export DB after --busy-timeout=MS" t.db -- fdx-export --busy-timeout = 5 ''
offers "top --cc" cpu -- fdx-top t.db --cc c
lacks "top --sku takes no file" t.db -- fdx-top --sku ''
offers "top DB" t.db -- fdx-top -n 5 t
offers "merge SRC" t.db -- fdx-merge fleet.db t
offers "report DB" t.db -- fdx-report -n 5 t
lacks "report --top takes no file" t.db -- fdx-report --top ''
offers "options by prefix" --max-depth -- fdx-ingest --max-d

finish
