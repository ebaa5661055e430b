#!/usr/bin/env bash
# Builds and installs fdx into a fresh prefix, static and then shared, and
# builds a program against each prefix the two ways a user would: with
# pkg-config and with find_package(fdx). Checks the installed files (fdx.pc,
# the CMake package, man pages and completions for every program), that the
# shared library has a soname and exports only the functions fdx.h declares,
# and that consumers run against the prefix's library. Then builds the same
# program with fdx as a subdirectory of its project, which must not bring in
# fdx's tests or benchmarks.
# Usage: package_test.sh FDX_SOURCE_DIR [C_COMPILER]
set -u
SRC=$(realpath "$1")
CC=${2:-${CC:-cc}}
T=$(mktemp -d "${TMPDIR:-/tmp}/fdx-package-XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
# run DESCRIPTION -- COMMAND...: runs COMMAND, its output in $T/log.
run() {
  local what=$1; shift 2
  if "$@" >"$T/log" 2>&1; then ok; return 0; fi
  bad "$what"; tail -n 30 "$T/log" >&2; return 1
}

# The functions fdx.h declares, one a line.
api_functions() {
  sed -e ':a' -e 'N' -e '$!ba' -e 's|/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/||g' "$1" |
    grep -oE 'fdx_[a-z0-9_]+[[:space:]]*\(' | tr -d '( \t' | sort -u
}

consumer_works() { # consumer_works DESCRIPTION PROGRAM
  mkdir -p "$T/run" && rm -rf "$T/run"/*
  run "$1 runs" -- "$2" "$T/run"
}

for kind in static shared; do
  P=$T/prefix-$kind B=$T/build-$kind
  shared=OFF
  [ "$kind" = shared ] && shared=ON
  run "$kind: configure" -- cmake -S "$SRC" -B "$B" -DCMAKE_C_COMPILER="$CC" \
    -DBUILD_SHARED_LIBS=$shared -DFDX_BUILD_TESTS=OFF -DCMAKE_INSTALL_PREFIX="$P" || continue
  run "$kind: build" -- cmake --build "$B" -j2 || continue
  run "$kind: install" -- cmake --install "$B" || continue

  check "$kind: fdx.h installed" test -f "$P/include/fdx.h"
  check "$kind: fdx.pc installed" test -f "$P/lib/pkgconfig/fdx.pc"
  for f in fdxConfig.cmake fdxConfigVersion.cmake fdxTargets.cmake; do
    check "$kind: lib/cmake/fdx/$f installed" test -f "$P/lib/cmake/fdx/$f"
  done
  tools=0
  for prog in "$P"/bin/*; do
    tools=$((tools + 1))
    tool=$(basename "$prog")
    check "$kind: $tool has a man page" test -f "$P/share/man/man1/$tool.1"
    check "$kind: $tool has a bash completion" test -f "$P/share/bash-completion/completions/$tool"
    run "$kind: installed $tool runs" -- env -u LD_LIBRARY_PATH "$prog" --version
  done
  check "$kind: programs installed" test "$tools" -ge 4
  check "$kind: fdx(7) installed" test -f "$P/share/man/man7/fdx.7"

  export PKG_CONFIG_PATH=$P/lib/pkgconfig
  if [ "$kind" = static ]; then
    check "static: no shared library" test ! -e "$P/lib/libfdx.so"
    flags=$(pkg-config --cflags --libs --static fdx) || bad "pkg-config --static fdx"
  else
    check "shared: no static library" test ! -e "$P/lib/libfdx.a"
    soname=$(readelf -d "$P/lib/libfdx.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    check "shared: libfdx.so has a soname" test -n "$soname"
    check "shared: $soname installed" test -L "$P/lib/$soname"
    nm -D --defined-only "$P/lib/libfdx.so" | awk '{print $3}' | sort -u >"$T/exported"
    api_functions "$P/include/fdx.h" >"$T/api"
    check "shared: fdx.h declares functions" test "$(wc -l <"$T/api")" -ge 20
    if cmp -s "$T/exported" "$T/api"; then ok; else
      bad "shared: exported symbols differ from fdx.h's functions (<: exported, >: declared)"
      diff "$T/exported" "$T/api" | head -20 >&2
    fi
    flags="$(pkg-config --cflags --libs fdx) -Wl,-rpath,$(pkg-config --variable=libdir fdx)" ||
      bad "pkg-config fdx"
  fi
  # shellcheck disable=SC2086 # the flags are words
  if run "$kind: consumer built with pkg-config" -- \
      "$CC" -std=c11 -Wall -Wextra -Werror -o "$T/pc-$kind" "$SRC/tests/consumer/consumer.c" $flags; then
    consumer_works "$kind: pkg-config consumer" "$T/pc-$kind"
  fi
  unset PKG_CONFIG_PATH

  C=$T/consumer-$kind
  if run "$kind: consumer configured with find_package(fdx)" -- cmake -S "$SRC/tests/consumer" \
       -B "$C" -DCMAKE_C_COMPILER="$CC" -DCMAKE_PREFIX_PATH="$P" &&
     run "$kind: consumer built with find_package(fdx)" -- cmake --build "$C"; then
    consumer_works "$kind: find_package consumer" "$C/consumer"
  fi
  if [ "$kind" = shared ]; then
    for prog in "$T/pc-shared" "$C/consumer" "$P/bin/fdx-ingest"; do
      lib=$(env -u LD_LIBRARY_PATH ldd "$prog" | awk '$1 ~ /^libfdx\.so/ {print $3}')
      check "shared: $(basename "$prog") loads libfdx from the prefix (got '$lib')" \
        test "$(realpath -m "$lib")" = "$(realpath "$P/lib/$soname")"
    done
  fi
  rm -rf "$B" # keep the disk use of the test small
done

# fdx as a subdirectory: the library and the programs only.
S=$T/subdir
if run "subdirectory: configure" -- cmake -S "$SRC/tests/consumer" -B "$S" \
     -DCMAKE_C_COMPILER="$CC" -DFDX_SOURCE_DIR="$SRC"; then
  cmake --build "$S" --target help >"$T/targets"
  for target in test_store test_codec replay_ingest record_bench parse_floor; do
    if grep -q " $target\$" "$T/targets"; then bad "subdirectory: fdx brought in $target"; else ok; fi
  done
  check "subdirectory: fdx::fdx builds" grep -q " fdx\$" "$T/targets"
  if run "subdirectory: consumer built" -- cmake --build "$S" -j2 --target consumer; then
    consumer_works "subdirectory: consumer" "$S/consumer"
  fi
fi

echo "package: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
