#!/usr/bin/env bash
# The codec suite in a locale whose decimal point is two bytes (ps_AF's
# U+066B), as a program embedding libfdx may set: every line must decode
# there as in the C locale. The locale is built into a directory of the test's
# own (localedef, from Debian's locales package).
set -euo pipefail
test_codec=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if ! localedef -i ps_AF -f UTF-8 "$dir/ps_AF.UTF-8" 2>"$dir/err"; then
  echo "locale_test: cannot build ps_AF.UTF-8 (is the locales package installed?)" >&2
  cat "$dir/err" >&2
  exit 1
fi
LOCPATH=$dir FDX_TEST_LOCALE=ps_AF.UTF-8 CK_DEFAULT_TIMEOUT=120 "$test_codec"
