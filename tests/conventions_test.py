"""The command-line convention every fdx program follows: summary on stderr,
-q, '-' for export, missing option values, swapped arguments, an empty
filter's known values, a missing parent directory, progress only on a
terminal, and the one message per file for wire schema 1.

Usage: conventions_test.py INGEST EXPORT TOP MERGE EXAMPLES_RUNS DIFF PRUNE
"""
import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile

import testlib
from testlib import check, run

INGEST, EXPORT, TOP, MERGE, RUNS = (os.path.abspath(a) for a in sys.argv[1:6])
DIFF, PRUNE = (os.path.abspath(a) for a in sys.argv[6:8])
RUN0 = os.path.join(RUNS, "run_0000")


def on_pty(cmd):
    """Runs cmd with stdout and stderr on a pseudo-terminal: (exit code, output)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the program closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(), out.decode(errors="replace")


def expect(code, what, cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    check(r.returncode == code, f"{what}: exit {r.returncode}, want {code}", r.stderr)
    return r


def main():
    t = tempfile.mkdtemp(prefix="fdx-conv-")
    try:
        db = os.path.join(t, "t.db")
        expect(0, "ingest", [INGEST, db] + [os.path.join(RUNS, r) for r in sorted(os.listdir(RUNS))])
        src = os.path.join(t, "src.db")
        expect(0, "ingest src", [INGEST, src, RUN0])

        # every summary on stderr, nothing on stdout; -q silences it
        for name, cmd in [
            ("ingest", [INGEST, "{}.db", RUN0]),
            ("export", [EXPORT, db, "{}"]),
            ("merge", [MERGE, "{}.db", src]),
        ]:
            def at(c, what):
                return [a.format(os.path.join(t, f"{name}-{what}")) for a in c]
            r = expect(0, f"{name} summary", at(cmd, "loud"))
            check(r.stdout == "" and r.stderr != "", f"{name}: summary on stderr only",
                  f"stdout: {r.stdout!r}\nstderr: {r.stderr!r}")
            q = expect(0, f"{name} -q", at([cmd[0], "-q"] + cmd[1:], "quiet"))
            check(q.stdout == "" and q.stderr == "", f"{name} -q prints nothing",
                  f"stdout: {q.stdout!r}\nstderr: {q.stderr!r}")
        # the programs with output of their own: it alone on stdout
        r = expect(0, "diff summary", [DIFF, src, db])
        check(r.stdout.startswith(" change") or r.stdout.split()[0] == "change",
              "diff: the changes on stdout", r.stdout[:300])
        check(r.stderr.startswith("fdx-diff: ") and "cells changed, 20 shown" in r.stderr,
              "diff: summary on stderr", r.stderr)
        q = expect(0, "diff -q", [DIFF, "-q", "--json", src, db])
        check(q.stderr == "" and q.stdout.startswith("[{"), "diff -q: no summary", q.stderr)
        evil = os.path.join(t, "evil.jsonl")
        with open(os.path.join(RUN0, "misses.jsonl")) as f:
            line = f.readline()
        with open(evil, "w") as f:
            f.write(line[: line.index('"hw":')] + '"hw":{"hardware_sku":"x\\u001b[2J","driver_version":"1"}}\n')
        edb = os.path.join(t, "evil.db")
        expect(0, "ingest a control character", [INGEST, edb, evil])
        r = expect(0, "diff, a control character", [DIFF, src, edb, "-n", "0"])
        check("\x1b" not in r.stdout and "x\\x1b[2J" in r.stdout, "diff: the table escapes it", repr(r.stdout[-400:]))
        r = expect(0, "diff --json, a control character", [DIFF, "--json", src, edb, "-n", "0"])
        check("\x1b" not in r.stdout and "x\\u001b[2J" in r.stdout, "diff --json: escaped", repr(r.stdout[-400:]))
        pdb = os.path.join(t, "prune.db")
        shutil.copy(src, pdb)
        r = expect(0, "prune summary", [PRUNE, "--cc", "cpu", pdb])
        check(r.stdout == "" and "removed" in r.stderr, "prune: summary on stderr only",
              f"stdout: {r.stdout!r}\nstderr: {r.stderr!r}")
        q = expect(0, "prune -q", [PRUNE, "-q", "--cc", "8.9", pdb])
        check(q.stdout == "" and q.stderr == "", "prune -q prints nothing", q.stderr)
        r = expect(0, "top -q, empty", [TOP, "-q", "--cc", "7.5", db])
        check(r.stderr == "", "top -q: no hint", r.stderr)

        # export to standard output: one kind, or refused
        with open(os.path.join(t, "export-loud", "misses.jsonl")) as f:
            misses = f.read()
        r = expect(0, "export - --kind misses", [EXPORT, db, "-", "--kind", "misses"], cwd=t)
        check(r.stdout == misses, "export -: the misses feed on stdout", r.stdout[:300])
        check("24 lines" in r.stderr, "export -: summary on stderr", r.stderr)
        r = expect(2, "export - without --kind", [EXPORT, db, "-"], cwd=t)
        check("--kind" in r.stderr, "export -: says to use --kind", r.stderr)
        check(not os.path.exists(os.path.join(t, "-")), "export -: no directory named '-'")
        expect(2, "export --kind with a directory", [EXPORT, "--kind", "misses", db, os.path.join(t, "o2")])
        expect(2, "export --kind other", [EXPORT, "--kind", "both", db, "-"])

        # an option without its value says so
        for name, cmd, opt in [
            ("ingest --run-id", [INGEST, db, RUN0, "--run-id"], "--run-id"),
            ("export --busy-timeout", [EXPORT, db, os.path.join(t, "o3"), "--busy-timeout"], "--busy-timeout"),
            ("top -n", [TOP, db, "-n"], "-n"),
            ("top --cc", [TOP, db, "--cc"], "--cc"),
            ("merge --busy-timeout", [MERGE, os.path.join(t, "m.db"), src, "--busy-timeout"], "--busy-timeout"),
            ("diff -n", [DIFF, src, db, "-n"], "-n"),
            ("prune --before", [PRUNE, db, "--before"], "--before"),
            ("prune --driver", [PRUNE, db, "--driver"], "--driver"),
        ]:
            r = expect(2, name, cmd)
            check(f"option '{opt}' needs a value" in r.stderr, f"{name}: names the missing value", r.stderr)
        for prog in (INGEST, DIFF, PRUNE):
            r = expect(2, "unknown option", [prog, "--bogus", db, RUN0])
            check("unknown option '--bogus'" in r.stderr, "unknown option named", r.stderr)

        # swapped arguments: a feed where the store goes
        feed = os.path.join(RUN0, "misses.jsonl")
        for name, cmd in [
            ("ingest", [INGEST, feed, db]),
            ("ingest run dir", [INGEST, RUN0, db]),
            ("export", [EXPORT, feed, os.path.join(t, "o4")]),
            ("top", [TOP, feed]),
            ("merge", [MERGE, feed, db]),
            ("diff", [DIFF, feed, db]),
            ("diff, B", [DIFF, db, RUN0]),
            ("prune", [PRUNE, "--cc", "cpu", feed]),
        ]:
            r = expect(2, f"{name} swapped", cmd)
            check("not a store (usage: " in r.stderr, f"{name}: swap hinted", r.stderr)
        with open(feed) as f:
            check(f.read().startswith('{"schema":2'), "the feed was not touched")

        # a filter that matches nothing lists the values that exist; one no
        # cell could hold (a mistyped capability) is a usage error
        r = expect(0, "top --cc 7.5", [TOP, "--cc", "7.5", db])
        check("no miss has --cc 7.5; known: 8.0, 8.6, 8.9, 9.0, cpu" in r.stderr, "cc values listed", r.stderr)
        r = expect(2, "top --cc 89", [TOP, "--cc", "89", db])
        check("neither 'cpu' nor MAJOR.MINOR" in r.stderr, "a mistyped capability is named", r.stderr)
        r = expect(0, "top --op MatMul --json", [TOP, "--op", "MatMul", "--json", db])
        check(r.stdout.strip() == "[]", "json stays an empty array", r.stdout)
        check("known: AddElementwise, BatchMatMul," in r.stderr, "op values listed", r.stderr)
        r = expect(0, "top --sku", [TOP, "--sku", "nope\x1b", db])
        check("no miss has --sku nope\\x1b; known: " in r.stderr and "NVIDIA H100 80GB HBM3" in r.stderr,
              "sku values listed, escaped", r.stderr)
        r = expect(0, "top, values exist together nowhere", [TOP, "--cc", "cpu", "--op", "FlashAttn", db])
        check("no miss matches them all" in r.stderr or r.stdout.count("\n") > 1,
              "combination explained", r.stdout + r.stderr)
        r = expect(0, "top, a match", [TOP, "--op", "LayerNorm", db])
        check(r.stderr == "" and "layernorm" in r.stdout, "no hint when rows match", r.stdout + r.stderr)

        # a missing parent directory is named
        r = expect(1, "ingest into a missing directory", [INGEST, os.path.join(t, "nodir", "x.db"), RUN0])
        check(f"no such directory '{os.path.join(t, 'nodir')}'" in r.stderr, "ingest names the directory", r.stderr)
        r = expect(1, "merge into a missing directory", [MERGE, os.path.join(t, "nodir", "x.db"), src])
        check("no such directory" in r.stderr, "merge names the directory", r.stderr)
        r = expect(1, "rejects in a missing directory",
                   [INGEST, "--skip-invalid", "--rejects", os.path.join(t, "nod2", "r"), db, RUN0])
        check(f"no such directory '{os.path.join(t, 'nod2')}'" in r.stderr, "rejects names the directory", r.stderr)

        # progress: on a terminal, not in a pipe, not with -q or --no-progress
        # (each run gets a store or directory of its own: no warnings between)
        for name, cmd in [
            ("ingest", [INGEST, "{}.db", RUN0]),
            ("merge", [MERGE, "{}.db", src]),
            ("export", [EXPORT, db, "{}"]),
        ]:
            prog = os.path.basename(cmd[0])
            shown = f"\r{prog}: {name}: "

            def at(opts, what):
                return [cmd[0]] + opts + [a.format(os.path.join(t, f"p-{name}-{what}")) for a in cmd[1:]]

            code, out = on_pty(at([], "tty"))
            check(code == 0 and shown in out and "done." in out, f"{name}: progress on a terminal", repr(out))
            code, out = on_pty(at(["-q"], "tty-q"))
            check(code == 0 and out == "", f"{name} -q: nothing on a terminal", repr(out))
            code, out = on_pty(at(["--no-progress"], "tty-no"))
            check(code == 0 and "done." not in out and "\r" not in out.replace("\r\n", "\n"),
                  f"{name} --no-progress", repr(out))
            r = subprocess.run(at([], "pipe"), capture_output=True)
            err = r.stderr.decode()
            check(r.returncode == 0 and "\r" not in err and "done." not in err,
                  f"{name}: no progress in a pipe", repr(err))
            r = subprocess.run(at(["--progress"], "pipe-forced"), capture_output=True)
            err = r.stderr.decode()
            check(r.returncode == 0 and shown in err and "done." in err, f"{name} --progress forces it", repr(err))
        r = subprocess.run([EXPORT, "--progress", db, "-", "--kind", "dispatches"], capture_output=True)
        check(b"\r" not in r.stdout and b"export: " in r.stderr, "progress never on stdout", repr(r.stderr))

        # wire schema 1: one message per file, the conversion it documents works
        old = os.path.join(t, "old.jsonl")
        with open(os.path.join(RUN0, "misses.jsonl")) as f:
            lines = f.read().splitlines()
        with open(old, "w") as f:
            for line in lines[:30]:
                rec = line.replace('"schema":2', '"schema":1', 1)
                f.write(rec[: rec.index(',"hw":')] + "}\n")
        odb = os.path.join(t, "old.db")
        r = expect(1, "schema 1 feed", [INGEST, odb, old, os.path.join(RUN0, "dispatches.jsonl")])
        n = len(lines[:30])
        check(r.stderr.count("wire schema 1") == 1, "one message for the file", r.stderr)
        check(f"old.jsonl: {n} lines of wire schema 1 (lines 1..{n})" in r.stderr, "names the lines", r.stderr)
        check("jq -c '.schema = 2 | .hw = " in r.stderr and "docs/FORMAT.md" in r.stderr,
              "says how to convert", r.stderr)
        check("more bad lines" not in r.stderr and f":{n}:" not in r.stderr, "no line-by-line listing", r.stderr)
        check(f"{n} bad lines: nothing ingested" in r.stderr, "still refused as a whole", r.stderr)
        if shutil.which("jq"):
            new = os.path.join(t, "new.jsonl")
            jq = ('.schema = 2 | .hw = {"compute_capability": [8, 9], "hardware_sku": '
                  '"NVIDIA GeForce RTX 4090", "driver_version": "550.54"}')
            with open(new, "w") as f:
                subprocess.run(["jq", "-c", jq, old], stdout=f, check=True)
            expect(0, "the converted feed ingests", [INGEST, odb, new])
        else:
            testlib.skip(1, "jq is not installed: the documented conversion is not run")
    finally:
        shutil.rmtree(t, ignore_errors=True)
    return testlib.finish("conventions")


if __name__ == "__main__":
    sys.exit(main())
