"""Every ```sh block of README.md and docs/QUERIES.md runs as written, in
order, in one shell, in a fresh copy of the repository: the quick start
first, then every command as a user would type it after it (the shell's
directory and PATH carry over from block to block, as in a terminal).

A block that cannot run as-is (it installs into /usr/local, needs clang, is
the test suite itself) is marked on the line before its fence with
`<!-- not run: REASON -->`; the reason is required.

Usage: readme_test.py SOURCE_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import testlib
from testlib import check

SRC = os.path.abspath(sys.argv[1])
DOCS = ["README.md", "docs/QUERIES.md"]
MARK = re.compile(r"^<!-- not run: (\S.*) -->$")


def blocks(path):
    """(line, text, reason-not-run or None) of each ```sh block of path."""
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            prev = lines[i - 1].strip() if i > 0 else ""
            m = MARK.match(prev)
            if prev.startswith("<!-- not run") and not m:
                check(False, f"{path}:{i + 1}: a not-run marker needs a reason", prev)
            out.append((start, "\n".join(lines[start:j]), m.group(1) if m else None))
            i = j
        i += 1
    return out


def copy_repo(dst):
    def ignore(d, names):
        top = os.path.abspath(d) == SRC
        return [n for n in names
                if n in (".git", "__pycache__") or (top and (n.startswith("build") or n == "demo"))]
    shutil.copytree(SRC, dst, ignore=ignore, symlinks=True)


def main():
    t = tempfile.mkdtemp(prefix="fdx-readme-")
    try:
        repo = os.path.join(t, "fdx")
        copy_repo(repo)
        script = ["set -euo pipefail"]
        ran = 0
        for doc in DOCS:
            for line, text, reason in blocks(os.path.join(repo, doc)):
                if reason:
                    print(f"not run: {doc}:{line}: {reason}")
                    continue
                ran += 1
                script.append(f"echo '### {doc}:{line}' >&2")
                script.append(text)
        check(ran >= 4, f"the README has commands to run ({ran} blocks)")
        env = {k: v for k, v in os.environ.items() if k not in ("CDPATH", "BASH_ENV", "ENV")}
        r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=repo, env=env,
                           capture_output=True, text=True)
        where = [ln for ln in r.stderr.splitlines() if ln.startswith("### ")]
        check(r.returncode == 0,
              f"the blocks ran (exit {r.returncode}, in {where[-1][4:] if where else 'the first block'})",
              r.stdout[-3000:] + "\n" + r.stderr[-3000:])
        check(len(where) == ran, f"every block ran ({len(where)} of {ran})")
    finally:
        shutil.rmtree(t, ignore_errors=True)
    return testlib.finish("readme")


if __name__ == "__main__":
    sys.exit(main())
