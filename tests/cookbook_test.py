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


# The example runs were captured a week apart.
CAPTURED = ["2026-10-01", "2026-10-08", "2026-10-15"]


def build_fixture(ingest, root, db):
    for r in range(3):
        run = os.path.join(root, "examples", "runs", f"run_{r:04d}")
        subprocess.run([ingest, "-q", "--run-id", f"run_{r:04d}", "--at", CAPTURED[r], db, run],
                       check=True)


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
                       (["--cc", "cpu"], "compute_capability = 'cpu'"),
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
    ("order \u061c1-2-3 a\u200bb\ufe0f\U000e0041", "Op\ufeff", 2),
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
    for raw in (b"\x1b", b"\r", b"\x07", b"\xff", "\u202e".encode(), "\u061c".encode(),
                "\u200b".encode(), "\ufeff".encode()):
        check(raw not in table, f"fdx-top table: raw {raw!r} in the output", repr(table))
    lines = table.decode("utf-8").split("\n")
    check(len(lines) == len(HOSTILE) + 2 and lines[-1] == "", "fdx-top table: one line per row",
          repr(table))
    start = lines[0].index("wanted")
    check(all(l[start - 2:start] == "  " and l[start] != " " for l in lines[1:-1]),
          "fdx-top table: the wanted column stays aligned", "\n".join(lines))
    check("w\\x1b[2J\\x1b]0;OWNED\\x07\\r\\nFAKE ROW" in lines[3] and "x\\n.shell" in lines[3],
          "fdx-top table: control characters shown as escapes", lines[3])
    check("order \\u{061c}1-2-3 a\\u{200b}b\\u{fe0f}\\u{e0041}" in lines[2] and
          "Op\\u{feff}" in lines[2],
          "fdx-top table: a bidi mark and invisible characters shown as escapes", lines[2])

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
    check(b"\x1b" not in p.stdout and "\u202e".encode() not in p.stdout and
          "\u061c".encode() not in p.stdout,
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


BLANKS = [("k", "mm"), ("k ", "mm"), (" k", "mm"), ("k\u00a0", "mm"), ("", "mm"),
          ('"k"', "mm"), ("j", "m m"), ("m j", "m"), ("a  b", "mm"), ("a b", "mm"),
          ("k\u2800", "mm")]


def check_blank_values(ingest, top, tmp):
    """Values that differ only in blanks, or by a quote, read apart in fdx-top's
    table: "k", "k ", " k" and "k" with a no-break space; an empty key; ops
    "m m" beside a key "j" against ops "m" beside a key "m j"."""
    feed, db = os.path.join(tmp, "blanks.jsonl"), os.path.join(tmp, "blanks.db")
    with open(feed, "w") as f:
        f.writelines(miss_line(w, op, 1) for w, op in BLANKS)
    subprocess.run([ingest, "-q", db, feed], check=True)
    got = json.loads(subprocess.run([top, "--json", "-n", "0", db], capture_output=True,
                                    check=True).stdout)
    table = subprocess.run([top, "-n", "0", db], capture_output=True, check=True,
                           text=True).stdout.split("\n")[1:-1]
    check(len(table) == len(got), "fdx-top: a table line per row", repr(table))
    shown = {}
    for r, line in zip(got, table):
        shown[(r["wanted"], r["ops"])] = line.split(None, 4)[4]
    want = {("k", "mm"): 'mm     k', ("k ", "mm"): 'mm     "k "', (" k", "mm"): 'mm     " k"',
            ("k\u00a0", "mm"): 'mm     k\\u{00a0}', ("", "mm"): 'mm     ""',
            ('"k"', "mm"): 'mm     "\\"k\\""', ("a  b", "mm"): "mm     a  b",
            ("a b", "mm"): "mm     a b", ("j", "m m"): '"m m"  j', ("m j", "m"): "m      m j",
            ("k\u2800", "mm"): "mm     k\\u{2800}"}
    for key, line in want.items():
        check(shown.get(key) == line, f"fdx-top shows {key!r} as {line!r}", repr(shown.get(key)))
    check(len(set(table)) == len(table), "fdx-top: no two rows read the same", "\n".join(table))
    feed, db = os.path.join(tmp, "known.jsonl"), os.path.join(tmp, "known.db")
    with open(feed, "w") as f:
        f.writelines(miss_line(w, op, 1) for w, op in (("a", "Gelu, Relu"), ("b", "Gelu"),
                                                       ("c", "Relu"), ("d", "")))
    subprocess.run([ingest, "-q", db, feed], check=True)
    p = subprocess.run([top, "--op", "nope ", db], capture_output=True, text=True)
    check(p.stderr.endswith('no miss has --op "nope "; known: "", Gelu, "Gelu, Relu", Relu\n'),
          "fdx-top: the known values of a filter are quoted where they would run together",
          p.stderr)


def top_json(top, db, args):
    p = subprocess.run([top, "--json", "-n", "0", db] + args, capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else p.stderr


def check_top_time(top, db):
    """--since/--until and --growth against the history views, with filters, and their
    --sql run in sqlite3."""
    for args, pred in ((["--since", "2026-10-08"], "day >= '2026-10-08'"),
                       (["--since", "2026-10-08T23:59:59Z", "--until", "2026-10-15"],
                        "day >= '2026-10-08' AND day < '2026-10-15'"),
                       (["--until", "@1791072000"], "day < '2026-10-04'"),
                       (["--since", "2026-10-01", "--cc", "cpu"],
                        "day >= '2026-10-01' AND compute_capability = 'cpu'"),
                       (["--since", "2026-10-08", "--op", "Gelu"], "day >= '2026-10-08' AND op = 'Gelu'")):
        got = top_json(top, db, args)
        want = sqlite(db, f"SELECT wanted, sum(count) FROM miss_daily WHERE {pred} "
                          "GROUP BY wanted ORDER BY 2 DESC, 1;").splitlines()[2:]
        check(isinstance(got, list) and got and [(r["wanted"], r["misses"]) for r in got] ==
              [(l.split()[0], int(l.split()[1])) for l in want],
              f"fdx-top {' '.join(args)}", f"{got}\n{want}")
        sql = subprocess.run([top, "--sql", "-n", "0", db] + args, capture_output=True,
                             text=True).stdout
        via_sql = sqlite(db, sql).splitlines()[2:]
        check(isinstance(got, list) and [l.split()[0] for l in via_sql] == [r["wanted"] for r in got],
              f"fdx-top --sql {' '.join(args)} runs in sqlite3", sql)
    got = top_json(top, db, ["--growth", "7d"])
    view = sqlite(db, "SELECT wanted, misses, previous, growth, is_new FROM miss_growth_7d;")
    ranked = [l.split() for l in view.splitlines()[2:]]
    check(isinstance(got, list) and
          [[r["wanted"], str(r["misses"]), str(r["previous"]), str(r["growth"]), str(int(r["new"]))]
           for r in got] == ranked, "fdx-top --growth 7d ranks as miss_growth_7d", f"{got}\n{view}")
    # A week earlier: the window of run_0001 against run_0000's, for one op.
    got = top_json(top, db, ["--growth", "1w", "--until", "2026-10-09", "--op", "Gather"])
    want = sqlite(db, """SELECT wanted, total(CASE WHEN day >= '2026-10-02' THEN count END) AS m,
                                total(CASE WHEN day < '2026-10-02' THEN count END) AS p
                         FROM miss_daily WHERE op = 'Gather' AND day >= '2026-09-25'
                           AND day < '2026-10-09'
                         GROUP BY wanted ORDER BY m - p DESC, m DESC, wanted;""")
    check(isinstance(got, list) and len(got) >= 2 and
          [[r["wanted"], r["misses"], r["previous"], r["growth"], r["new"]] for r in got] ==
          [[w, int(float(m)), int(float(p)), int(float(m)) - int(float(p)), int(float(p)) == 0]
           for w, m, p in (l.split() for l in want.splitlines()[2:])],
          "fdx-top --growth --until --op", f"{got}\n{want}")
    sql = subprocess.run([top, "--sql", "-n", "0", "--growth", "7", db], capture_output=True, text=True).stdout
    check([l.split()[0] for l in sqlite(db, sql).splitlines()[2:]] == [w[0] for w in ranked],
          "fdx-top --growth --sql runs in sqlite3", sql)


def check_time_recipes(ingest, root, db, tmp):
    """The time recipes against stores that absorbed only the runs they ask about:
    what grew since run_0001 is what run_0002 brought, and the week of 2026-10-08 is
    run_0001."""
    doc = open(os.path.join(root, "docs", "QUERIES.md"), encoding="utf-8").read()
    recipes = [m.group(1) for m in BLOCK.finditer(doc)]
    for run, marker, alone in (
            (2, "run_id = 'run_0001'", "SELECT wanted, kernel_source, compute_capability AS cc, "
                                       "count AS added FROM miss_cells "
                                       "ORDER BY added DESC, wanted LIMIT 5;"),
            (1, "day >= '2026-10-08' AND day < '2026-10-15'",
             "SELECT wanted, sum(count) AS misses FROM miss_cells GROUP BY wanted "
             "ORDER BY misses DESC, wanted LIMIT 5;")):
        found = [r for r in recipes if marker in r and "miss_daily" in r]
        single = os.path.join(tmp, f"run{run}.db")
        subprocess.run([ingest, "-q", "--at", CAPTURED[run], single,
                        os.path.join(root, "examples", "runs", f"run_{run:04d}")], check=True)
        want = sqlite(single, alone)
        check(len(found) == 1 and sqlite(db, found[0]) == want,
              f"the recipe about run_{run:04d} answers what that run brought",
              f"{found}\nwant:\n{want}got:\n{sqlite(db, found[0]) if found else ''}")


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
            check_blank_values(ingest, top, tmp)
            check_top_time(top, db)
            check_time_recipes(ingest, root, db, tmp)
    return finish("cookbook")


if __name__ == "__main__":
    sys.exit(main())
