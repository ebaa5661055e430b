#!/usr/bin/env bash
# cmake/embed_sql.cmake's "-- @include" lines: a fragment of sql/ or of sql/pg/
# stands in for the line, without its leading comments and final newline, in a
# file of either folder (a blank line after the include line keeps the newline);
# an include of a file that is not there stops the build.
# Usage: embed_sql_test.sh CMAKE EMBED_SQL_CMAKE
set -u
CMAKE=$1 EMBED=$2
NAME=embed_sql
. "$(dirname "$0")/shlib.sh"

# embed DIR: runs the embedder on DIR/sql, output in DIR/sql_text.c
embed() {
  "$CMAKE" -DSQL_DIR="$1/sql" -DOUT_C="$1/sql_text.c" -DOUT_H="$1/sql_text.h" -P "$EMBED" \
    >"$T/out" 2>"$T/err"
}
# constant DIR NAME: the C text of fdx_sql_NAME in DIR/sql_text.c
constant() { sed -n "/^const char fdx_sql_$2\[\] =/,/;\$/p" "$1/sql_text.c"; }

mkdir -p "$T/ok/sql/pg"
printf -- '-- A fragment.\n-- Not run alone.\nWHERE x = 1\n  AND y = 2\n\n' >"$T/ok/sql/part.sql"
printf -- '-- A PostgreSQL fragment.\n    WHERE y = $1\n' >"$T/ok/sql/pg/part.sql"
printf -- '-- Uses part.\nSELECT 1 FROM t\n-- @include part\n;\n' >"$T/ok/sql/a.sql"
printf -- 'SELECT 2 FROM t\n-- @include pg/part\n    ORDER BY 1;\n' >"$T/ok/sql/pg/b.sql"
printf -- 'SELECT 3 FROM t\n-- @include part\n\n;\n' >"$T/ok/sql/pg/c.sql"
if embed "$T/ok"; then ok; else bad "embedding failed"; cat "$T/err" >&2; fi

constant "$T/ok" a >"$T/a"
cat >"$T/a.want" <<'C'
const char fdx_sql_a[] =
    "-- Uses part.\n"
    "SELECT 1 FROM t\n"
    "WHERE x = 1\n"
    "  AND y = 2;\n"
    "";
C
same "$T/a" "$T/a.want"

constant "$T/ok" pg_b >"$T/b"
cat >"$T/b.want" <<'C'
const char fdx_sql_pg_b[] =
    "SELECT 2 FROM t\n"
    "    WHERE y = $1    ORDER BY 1;\n"
    "";
C
same "$T/b" "$T/b.want"

constant "$T/ok" pg_c >"$T/c"
cat >"$T/c.want" <<'C'
const char fdx_sql_pg_c[] =
    "SELECT 3 FROM t\n"
    "WHERE x = 1\n"
    "  AND y = 2\n"
    ";\n"
    "";
C
same "$T/c" "$T/c.want"

mkdir -p "$T/missing/sql/pg"
printf -- 'SELECT 1\n-- @include pg/nowhere\n;\n' >"$T/missing/sql/a.sql"
if embed "$T/missing"; then bad "an include of a missing file was embedded"; else ok; fi
has err "includes pg/nowhere"
[ ! -e "$T/missing/sql_text.c" ] && ok || bad "sql_text.c written despite a missing include"

finish
