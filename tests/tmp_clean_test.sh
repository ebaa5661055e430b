#!/usr/bin/env bash
# A program the suite runs leaves nothing in the temporary directory: it runs
# with a fresh, empty /tmp of its own (a private mount namespace), which must
# be empty again when it exits. Where namespaces are not permitted, TMPDIR
# points at an empty directory instead (a program ignoring TMPDIR escapes
# that check, so it is reported as a skip).
# Usage: tmp_clean_test.sh PROGRAM ARGS...
set -u
# The program and its arguments may themselves live under /tmp (a checkout
# there): the old /tmp stays reachable through a bind mount, and arguments
# under /tmp are rewritten to go through it.
if unshare -m true 2>/dev/null; then
  keep=$(mktemp -d /dev/shm/fdx-tmpclean-XXXXXX 2>/dev/null || mktemp -d /run/fdx-tmpclean-XXXXXX)
  unshare -m bash -c '
    keep=$1; shift
    mount --make-rprivate / 2>/dev/null
    mount --bind /tmp "$keep" || { echo "FAIL: cannot keep /tmp reachable"; exit 1; }
    mount -t tmpfs tmpfs /tmp || { echo "FAIL: cannot mount a tmpfs on /tmp"; exit 1; }
    args=()
    for a in "$@"; do
      case $a in /tmp/*) args+=("$keep/${a#/tmp/}") ;; *) args+=("$a") ;; esac
    done
    TMPDIR=/tmp "${args[@]}" || { echo "FAIL: $1 exited $?"; exit 1; }
    left=$(ls -A /tmp)
    if [ -n "$left" ]; then echo "FAIL: left in /tmp: $left"; exit 1; fi
    echo "tmp_clean: $1 left nothing"' tmp_clean "$keep" "$(realpath "$1")" "${@:2}"
  rc=$?
  rmdir "$keep"
  exit $rc
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/fdx-tmpclean-XXXXXX")
trap 'rm -rf "$T"' EXIT
TMPDIR=$T "$@" || { echo "FAIL: $1 exited $?"; exit 1; }
left=$(ls -A "$T")
if [ -n "$left" ]; then echo "FAIL: left in TMPDIR: $left"; exit 1; fi
echo "skipped: no private /tmp (unshare -m not permitted); only TMPDIR was checked"
