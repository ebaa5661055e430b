#!/usr/bin/env bash
# A program the suite runs leaves nothing in the temporary directory: it runs
# with a fresh, empty /tmp of its own (a private mount namespace), which must
# be empty again when it exits. Where namespaces are not permitted, TMPDIR
# points at an empty directory instead (a program ignoring TMPDIR escapes
# that check, so it is reported as a skip).
# Usage: tmp_clean_test.sh PROGRAM ARGS...
set -u
if unshare -m true 2>/dev/null; then
  exec unshare -m bash -c '
    mount -t tmpfs tmpfs /tmp || { echo "FAIL: cannot mount a tmpfs on /tmp"; exit 1; }
    TMPDIR=/tmp "$@" || { echo "FAIL: $1 exited $?"; exit 1; }
    left=$(ls -A /tmp)
    if [ -n "$left" ]; then echo "FAIL: left in /tmp: $left"; exit 1; fi
    echo "tmp_clean: $1 left nothing"' tmp_clean "$@"
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/fdx-tmpclean-XXXXXX")
trap 'rm -rf "$T"' EXIT
TMPDIR=$T "$@" || { echo "FAIL: $1 exited $?"; exit 1; }
left=$(ls -A "$T")
if [ -n "$left" ]; then echo "FAIL: left in TMPDIR: $left"; exit 1; fi
echo "skipped: no private /tmp (unshare -m not permitted); only TMPDIR was checked"
