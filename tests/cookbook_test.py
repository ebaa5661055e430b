#!/usr/bin/env python3
"""Runs every query in docs/QUERIES.md against a store built from examples/runs
and checks it prints the result the cookbook shows. Also checks fdx-top
against the same store: its table, its JSON, its filters, and that its --sql
output, run in sqlite3, gives the same ranking. Values that a terminal or a
shell would interpret (escape sequences, CR/LF, a filter that would start a
sqlite3 dot-command, bytes that are not UTF-8) never reach the output raw.

Usage: cookbook_test.py FDX_INGEST FDX_TOP REPO_ROOT [--update]
  --update rewrites the result blocks of docs/QUERIES.md from this build.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from testlib import check, finish

BLOCK = re.compile(r"```sql\n(.*?)```\n\n```text\n(.*?)```", re.S)
def sqlite(db, sql):
    p = subprocess.run(["sqlite3", "-header", "-column", db], input=sql, capture_output=True,
                       text=True)
    if p.returncode != 0 or p.stderr:
        return f"ERROR: {p.stderr}"
    return "".join(line.rstrip() + "\n" for line in p.stdout.splitlines())


def build_fixture(ingest, root, db):
    for r in range(3):
        run = os.path.join(root, "examples", "runs", f"run_{r:04d}")
        subprocess.run([ingest, "-q", "--run-id", f"run_{r:04d}", db, run], check=True)


def check_cookbook(db, doc_path, update):
    doc = open(doc_path, encoding="utf-8").read()
    results = []

    def replace(m):
        got = sqlite(db, m.group(1))
        results.append((m.group(1), m.group(2), got))
        return f"```sql\n{m.group(1)}```\n\n```text\n{got}```"

    new_doc = BLOCK.sub(replace, doc)
    check(len(results) >= 8, "the cookbook has its recipes", str(len(results)))
    if update:
        open(doc_path, "w", encoding="utf-8").write(new_doc)
        return
    for sql, want, got in results:
        check(got == want and got.strip() and not got.startswith("ERROR"),
              "cookbook query", f"{sql}\nwant:\n{want}got:\n{got}")


def check_top(top, db):
    p = subprocess.run([top, db, "-n", "3"], capture_output=True, text=True)
    lines = p.stdout.splitlines()
    check(p.returncode == 0 and len(lines) == 4 and lines[0].split()[:2] == ["rank", "misses"],
          "fdx-top table", p.stdout + p.stderr)
    widths = {len(l.rstrip()) - len(l.rstrip().split()[-1]) for l in lines}
    check(len(widths) == 1, "fdx-top columns are aligned", p.stdout)
    ranked = json.loads(subprocess.run([top, "--json", "-n", "0", db], capture_output=True,
                                       text=True).stdout)
    demand = sqlite(db, "SELECT wanted, misses FROM miss_demand;").splitlines()[2:]
    check([r["wanted"] for r in ranked] == [l.split()[0] for l in demand],
          "fdx-top --json ranks as miss_demand does")
    check([r["misses"] for r in ranked] == sorted((r["misses"] for r in ranked), reverse=True),
          "ranked by misses")
    for args, pred in ((["--cc", "8.9"], "compute_capability = '8.9'"),
                       (["--cc", "cpu"], "compute_capability IS NULL"),
                       (["--op", "Gelu"], "op = 'Gelu'"),
                       (["--source", "cutlass-generic"], "kernel_source = 'cutlass-generic'"),
                       (["--sku", "NVIDIA H100 80GB HBM3", "--op", "Gather"],
                        "hardware_sku = 'NVIDIA H100 80GB HBM3' AND op = 'Gather'")):
        got = json.loads(subprocess.run([top, "--json", "-n", "0", db] + args,
                                        capture_output=True, text=True).stdout)
        want = sqlite(db, f"SELECT wanted, sum(count) FROM miss_cells WHERE {pred} "
                          "GROUP BY wanted ORDER BY 2 DESC, 1;").splitlines()[2:]
        check([(r["wanted"], r["misses"]) for r in got] ==
              [(l.split()[0], int(l.split()[1])) for l in want] and got,
              f"fdx-top {' '.join(args)}", f"{got}\n{want}")
        sql = subprocess.run([top, "--sql", "-n", "0", db] + args, capture_output=True,
                             text=True).stdout
        via_sql = sqlite(db, sql).splitlines()[2:]
        check([l.split()[0] for l in via_sql] == [r["wanted"] for r in got],
              f"fdx-top --sql {' '.join(args)} runs in sqlite3", sql)


HOSTILE = [
    ("w\x1b[2J\x1b]0;OWNED\x07\r\nFAKE ROW", "x\n.shell touch F\n", 1),
    ("plain", "MatMul\\\u00e9\u202e\"q'", 3),
]


def miss_line(wanted, op, count):
    return json.dumps({"schema": 2, "wanted": wanted, "fallback": {
        "backend": "Cuda", "op": op, "dtypes": ["F16"], "kernel_source": "k",
        "kernel_revision_hash": 1}, "count": count,
        "hw": {"hardware_sku": "cpu", "driver_version": "n/a"}}) + "\n"


def check_hostile_values(ingest, top, tmp):
    feed, db = os.path.join(tmp, "hostile.jsonl"), os.path.join(tmp, "hostile.db")
    with open(feed, "w") as f:
        f.writelines(miss_line(*h) for h in HOSTILE)
    subprocess.run([ingest, "-q", db, feed], check=True)
    # (A crafted store holding text that is not UTF-8 is refused before
    # anything is shown: untrusted_test.py checks that.)

    table = subprocess.run([top, db], capture_output=True).stdout
    for raw in (b"\x1b", b"\r", b"\x07", b"\xff", "\u202e".encode()):
        check(raw not in table, f"fdx-top table: raw {raw!r} in the output", repr(table))
    lines = table.decode("utf-8").split("\n")
    check(len(lines) == 4 and lines[3] == "", "fdx-top table: one line per row", repr(table))
    start = lines[0].index("wanted")
    check(all(l[start - 2:start] == "  " and l[start] != " " for l in lines[1:3]),
          "fdx-top table: the wanted column stays aligned", "\n".join(lines))
    check("w\\x1b[2J\\x1b]0;OWNED\\x07\\r\\nFAKE ROW" in lines[2] and "x\\n.shell" in lines[2],
          "fdx-top table: control characters shown as escapes", lines[2])

    p = subprocess.run([top, "--json", db], capture_output=True)
    try:
        got = json.loads(p.stdout)
    except ValueError as e:
        got = None
        check(False, "fdx-top --json: valid JSON", f"{e}: {p.stdout!r}")
    if got is not None:
        check([(r["wanted"], r["ops"], r["misses"]) for r in got] ==
              [(w, o, c) for w, o, c in sorted(HOSTILE, key=lambda h: -h[2])],
              "fdx-top --json: the values round-trip", repr(got))
    check(b"\x1b" not in p.stdout and "\u202e".encode() not in p.stdout,
          "fdx-top --json: control characters escaped", repr(p.stdout))

    # Filters that would run a shell command if they reached sqlite3 raw.
    for value in (b"x\n.shell touch F\n", b"x\r\n.system touch F", b"\xff'\n.shell touch F",
                  "MatMul\\\u00e9\u202e\"q'".encode()):
        sql = subprocess.run([top, "--op", value, "--sql", db], capture_output=True).stdout
        dots = [l for l in sql.split(b"\n") if l.startswith(b".")]
        check(len(dots) == 6 and all(l.startswith(b".parameter ") for l in dots),
              "fdx-top --sql: one line per parameter, no other dot-command", repr(sql))
        p = subprocess.run(["sqlite3", "-json", db], input=sql, capture_output=True, cwd=tmp)
        ran = os.path.exists(os.path.join(tmp, "F"))
        check(not ran, f"fdx-top --sql --op {value!r} ran a command", repr(sql))
        if ran:
            os.remove(os.path.join(tmp, "F"))
        want = [h[0] for h in HOSTILE if h[1].encode() == value]
        check(p.returncode == 0 and [r["wanted"] for r in json.loads(p.stdout or b"[]")] == want, f"fdx-top --sql --op {value!r} filters on the exact value",
              repr(p.stdout) + repr(p.stderr))


def main():
    ingest, top, root = sys.argv[1:4]
    update = "--update" in sys.argv
    with tempfile.TemporaryDirectory(prefix="fdx-cookbook-") as tmp:
        db = os.path.join(tmp, "fixture.db")
        build_fixture(ingest, root, db)
        check_cookbook(db, os.path.join(root, "docs", "QUERIES.md"), update)
        if not update:
            check_top(top, db)
            check_hostile_values(ingest, top, tmp)
    return finish("cookbook")


if __name__ == "__main__":
    sys.exit(main())
