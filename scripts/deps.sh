#!/usr/bin/env bash
# Installs what fdx needs to build, test and run its demo on Debian, when it
# is missing. Runs apt-get as root, or through sudo otherwise.
set -euo pipefail

need_pkgs=()
# groff and man check the man pages in the test suite; readelf and nm (binutils)
# the shared library's exports; jq runs the schema-1 conversion that FORMAT.md documents;
# chromium renders fdx-report's page in its test.
for cmd_pkg in cc:build-essential make:build-essential cmake:cmake pkg-config:pkg-config \
               sqlite3:sqlite3 python3:python3 groff:groff-base man:man-db \
               readelf:binutils nm:binutils jq:jq chromium:chromium; do
  command -v "${cmd_pkg%%:*}" >/dev/null 2>&1 || need_pkgs+=("${cmd_pkg#*:}")
done
# postgresql and libpq-dev: the PostgreSQL store is built against libpq, and the
# suite tests it against a server of its own (scripts/pg_cluster.sh).
# locales: the codec suite also runs in a locale it builds (tests/locale_test.sh).
for lib in libsqlite3-dev libcjson-dev libpq-dev postgresql check fonts-dejavu-core locales; do
  dpkg-query -W -f='${Status}' "$lib" 2>/dev/null | grep -q 'install ok installed' \
    || need_pkgs+=("$lib")
done
if [ "${FDX_WITH_CLANG:-0}" = 1 ] && ! command -v clang >/dev/null 2>&1; then
  need_pkgs+=(clang)
fi

if [ "${#need_pkgs[@]}" -gt 0 ]; then
  mapfile -t need_pkgs < <(printf '%s\n' "${need_pkgs[@]}" | sort -u)
  echo "deps: installing ${need_pkgs[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
