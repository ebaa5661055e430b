#!/usr/bin/env python3
"""fdx-report's page, rendered in a real headless browser.

Builds a store from examples/runs ingested on several days (with --at) plus
a miss whose wanted key is hostile markup, writes the page with fdx-report,
and checks: nothing in it is fetched (no http(s):// reference, no external
resource); Chromium's DOM shows the same numbers SQLite's views give (the
demand ranking, the heatmap cells, the trends, the regret rows, the ledger
summary); the hostile key is shown as text and adds no element; a long op's label is
cut at a character; a store with
a bad cell, a missing store and bad usage exit 1, 1 and 2 and leave the
previous page. Screenshots of the page in light and dark mode are kept in
ARTIFACT_DIR. Chromium (Debian's chromium package; scripts/deps.sh installs
it) is required: without it the test fails.

Usage: report_test.py FDX_INGEST FDX_REPORT EXAMPLES_RUNS_DIR ARTIFACT_DIR
"""
import html.parser
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from testlib import check, finish, run_bounded

TIMEOUT = int(os.environ.get("FDX_TEST_TIMEOUT", "120"))
# Every element the page is made of; anything else came from the data.
PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "section",
             "p", "dl", "div", "dt", "dd", "table", "thead", "tbody", "tr", "th", "td", "span",
             "svg", "g", "rect", "text", "polyline", "circle", "br", "i"}
HOSTILE = '"><script>alert(1)</script><img src=x onerror=alert(2)>&amp;\'<b>'
# An op longer than the heatmap's label, whose 20th byte is inside a character.
WIDE_OP = "x" + "\u00c4" * 15


def run(cmd):
    return run_bounded(cmd, TIMEOUT)


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_cmd(browser, profile, *args):
    return [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={profile}", *args]


class Dom(html.parser.HTMLParser):
    """The elements fdx-report marks with classes and data attributes."""

    def __init__(self):
        super().__init__()
        self.tags = []       # every start tag, in order
        self.rows = {}       # tr class (first word) -> list of dict of data-* of its cells
        self.heat = []       # data-* of each heatmap cell
        self.ledger = {}     # data-ledger -> text
        self.key_texts = []  # text of every td.key
        self._row = None
        self._capture = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        cls = (a.get("class") or "").split()
        if tag == "tr" and cls and cls[0] in ("demand", "trend", "regret"):
            self._row = {"_up": "up" in cls}
            self.rows.setdefault(cls[0], []).append(self._row)
        if tag == "g" and "heat" in cls:
            self.heat.append({k[5:]: v for k, v in a.items() if k.startswith("data-")})
        if self._row is not None and tag == "td":
            for k, v in a.items():
                if k.startswith("data-"):
                    self._row[k[5:]] = v
            if "key" in cls:
                self._capture, self._text = "key", ""
        if tag == "dd" and "data-ledger" in a:
            self._capture, self._text = a["data-ledger"], ""

    def handle_endtag(self, tag):
        if tag == "tr":
            self._row = None
        if tag in ("td", "dd") and self._capture:
            if self._capture == "key":
                self.key_texts.append(self._text)
            else:
                self.ledger[self._capture] = self._text
            self._capture = None

    def handle_data(self, data):
        if self._capture:
            self._text += data


def build_store(ingest, runs, tmp):
    db = os.path.join(tmp, "s.db")
    days = ["2026-11-01", "2026-11-12", "2026-11-20", "2026-11-26"]
    names = sorted(os.listdir(runs))
    for i, day in enumerate(days):
        run_dir = os.path.join(runs, names[i % len(names)])
        p = run([ingest, "-q", "--at", day, db, run_dir])
        check(p.returncode == 0, f"ingest {run_dir} at {day}", p.stderr)
    hostile = os.path.join(tmp, "hostile.jsonl")
    with open(hostile, "w") as f:
        f.write(json.dumps({"schema": 2, "wanted": HOSTILE, "fallback": {
            "backend": "Cuda", "op": "Gelu<i>", "dtypes": ["F16"], "kernel_source": "s",
            "kernel_revision_hash": 1}, "count": 100000, "hw": {
            "compute_capability": [8, 9], "hardware_sku": "sku", "driver_version": "1"}}) + "\n")
        f.write(json.dumps({"schema": 2, "wanted": "wide", "fallback": {
            "backend": "Cuda", "op": WIDE_OP, "dtypes": ["F16"], "kernel_source": "s",
            "kernel_revision_hash": 1}, "count": 1, "hw": {
            "compute_capability": [8, 9], "hardware_sku": "sku", "driver_version": "1"}}) + "\n")
    p = run([ingest, "-q", "--at", "2026-11-27", db, hostile])
    check(p.returncode == 0, "ingest the hostile key", p.stderr)
    return db


def sql_expectations(db, top):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    q = lambda sql, *a: con.execute(sql, a).fetchall()
    e = {
        "demand": q("SELECT wanted, misses, fallbacks, devices FROM miss_demand LIMIT ?", top),
        "heat": q("SELECT op, compute_capability, CAST(total(count) AS INTEGER) FROM miss_cells "
                  "GROUP BY op, compute_capability"),
        "trend": q("SELECT wanted, misses, previous, growth FROM miss_growth_7d LIMIT ?", top),
        "regret": q("SELECT coalesce(structure_key, ''), chosen_ns, best_ns, speedup, count "
                    "FROM dispatch_regret LIMIT ?", top),
        "ledger": q("SELECT count(*), count(DISTINCT run_id), count(DISTINCT store), min(day), "
                    "max(day), CAST(total(records) AS INTEGER), "
                    "(SELECT count(*) FROM miss_cells), (SELECT count(*) FROM dispatch_cells) "
                    "FROM fleet_ledger")[0],
    }
    con.close()
    return e


def num(text):
    return float(text) if re.fullmatch(r"-?[0-9.]+(e[-+]?[0-9]+)?", text or "") else None


def check_page(page, dom, exp):
    raw = open(page, "rb").read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, "the page is valid UTF-8", str(e))
        text = raw.decode("utf-8", "replace")
    check("x" + "\u00c4" * 9 + "\u2026</text>" in text,
          "a long op's label is cut before a character, not inside it")
    check(not re.search(r"https?://", text, re.I), "no http(s):// reference in the page")
    tags = [re.sub(r'"[^"]*"', '""', t) for t in re.findall(r"<[a-zA-Z][^<>]*>", text)]
    for pat in (r"^<script", r"^<link", r"^<img", r"^<iframe", r"^<object", r"^<embed",
                r"\s(src|href|srcset|data|xlink:href)\s*="):
        hits = [t for t in tags if re.search(pat, t, re.I)]
        check(not hits, f"no external resource: no tag matches {pat}", str(hits[:3]))
    style = "".join(re.findall(r"<style>(.*?)</style>", text, re.S))
    check(style and not re.search(r"@import|url\(|@font-face", style, re.I),
          "the inline CSS fetches nothing")
    extra = set(dom.tags) - PAGE_TAGS
    check(not extra, "the hostile key adds no element to the DOM", str(sorted(extra)))
    check(HOSTILE in dom.key_texts, "the hostile key is shown as its text",
          repr(dom.key_texts[:3]))

    got = [(r.get("key"), num(r.get("misses")), num(r.get("fallbacks")), num(r.get("devices")))
           for r in dom.rows.get("demand", [])]
    want = [(w, float(m), float(f), float(d)) for w, m, f, d in exp["demand"]]
    check(len(want) > 3 and got == want, "the demand ranking shown is miss_demand's",
          f"shown {got[:3]}\nsql   {want[:3]}")
    check(got and got[0][0] == HOSTILE, "the hostile key leads the ranking (by its count)")

    got = sorted((h.get("op"), h.get("cc"), num(h.get("misses"))) for h in dom.heat)
    want = sorted((o, c, float(m)) for o, c, m in exp["heat"])
    check(len(want) > 5 and got == want, "the heatmap cells are miss_cells' sums by op and cc",
          f"shown {got[:4]}\nsql   {want[:4]}")

    trows = dom.rows.get("trend", [])
    got = [(r.get("key"), num(r.get("misses")), num(r.get("previous")), num(r.get("growth")))
           for r in trows]
    want = [(w, float(m), float(p), float(g)) for w, m, p, g in exp["trend"]]
    check(len(want) > 3 and got == want, "the trends are miss_growth_7d's",
          f"shown {got[:3]}\nsql   {want[:3]}")
    check([r["_up"] for r in trows] == [g > 0 for _, _, _, g in exp["trend"]],
          "exactly the growing keys are highlighted")
    check(any(g > 0 for *_, g in exp["trend"]) and any(g <= 0 for *_, g in exp["trend"]),
          "the store has growing and shrinking keys", str(exp["trend"]))

    got = [(r.get("key"), num(r.get("chosen-ns")), num(r.get("best-ns")), num(r.get("speedup")),
            num(r.get("count"))) for r in dom.rows.get("regret", [])]
    want = [(k, float(c), float(b), float(s), float(n)) for k, c, b, s, n in exp["regret"]]
    check(len(want) > 0 and got == want, "the regret rows are dispatch_regret's",
          f"shown {got[:3]}\nsql   {want[:3]}")

    names = ["ingests", "runs", "stores", "first_day", "last_day", "records", "miss_cells",
             "dispatch_cells"]
    got = [dom.ledger.get(n) for n in names]
    want = ["-" if v is None else str(v) for v in exp["ledger"]]
    check(got == want, "the ledger summary is fleet_ledger's", f"shown {got}\nsql   {want}")


def screenshots(browser, page, tmp, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for mode, extra in (("light", []),
                        ("dark", ["--force-dark-mode",
                                  "--blink-settings=preferredColorScheme=0"])):
        png = os.path.join(out_dir, f"report_{mode}.png")
        if os.path.exists(png):
            os.remove(png)
        p = run(chromium_cmd(browser, os.path.join(tmp, f"profile-{mode}"), *extra,
                             "--window-size=1280,2400", f"--screenshot={png}",
                             f"file://{page}"))
        ok = p.returncode == 0 and os.path.exists(png)
        with open(png, "rb") if ok else open(os.devnull, "rb") as f:
            head = f.read(8)
        check(ok and head == b"\x89PNG\r\n\x1a\n", f"{mode} screenshot taken",
              p.stderr[-2000:])
        print(f"report_test: {mode} screenshot: {png}")


def check_failures(ingest, report, db, tmp):
    page = os.path.join(tmp, "kept.html")
    with open(page, "w") as f:
        f.write("previous page\n")
    p = run([report])
    check(p.returncode == 2, "no arguments: exit 2", p.stderr)
    p = run([report, "--top", "0", db, page])
    check(p.returncode == 2, "--top 0: exit 2", p.stderr)
    p = run([report, os.path.join(tmp, "missing.db"), page])
    check(p.returncode == 1 and "missing.db" in p.stderr, "a missing store: exit 1, named",
          p.stderr)
    bad = os.path.join(tmp, "bad.db")
    shutil.copy(db, bad)
    con = sqlite3.connect(bad)
    con.execute("UPDATE miss_cell SET wanted = CAST(x'ff41' AS TEXT) "
                "WHERE cell_id = (SELECT min(cell_id) FROM miss_cell)")
    con.commit()
    con.close()
    p = run([report, bad, page])
    check(p.returncode == 1 and "bad.db" in p.stderr, "a cell that is not UTF-8: exit 1, named",
          p.stderr)
    with open(page) as f:
        check(f.read() == "previous page\n", "a failed report leaves the previous page")
    check(sorted(os.listdir(tmp)).count("kept.html") == 1 and
          not [n for n in os.listdir(tmp) if n.startswith("kept.html.")],
          "a failed report leaves no temporary file", str(os.listdir(tmp)))
    p = run([report, db, os.path.join(tmp, "no", "such", "dir.html")])
    check(p.returncode == 1 and "dir.html" in p.stderr, "an unwritable output: exit 1, named",
          p.stderr)


def check_bounded_heatmap(ingest, report, tmp):
    """A store with many ops and compute capabilities: the heatmap shows the
    --top ops with the most misses and at most 24 capabilities, and says how
    many there are in all (unbounded, 20,000 ops took minutes and megabytes)."""
    feed, db, page = (os.path.join(tmp, n) for n in ("ops.jsonl", "ops.db", "ops.html"))
    sums = {}
    with open(feed, "w") as f:
        for i in range(3000):
            op, count = f"op{i % 300:03d}", 1 + (i * 7919) % 1000
            sums[op] = sums.get(op, 0) + count
            f.write(json.dumps({"schema": 2, "wanted": f"k{i % 40}", "fallback": {
                "backend": "Cuda", "op": op, "dtypes": ["F16"], "kernel_source": "s",
                "kernel_revision_hash": 1}, "count": count, "hw": {
                "compute_capability": [i % 50, 0], "hardware_sku": "sku",
                "driver_version": "1"}}) + "\n")
    p = run([ingest, "-q", db, feed])
    check(p.returncode == 0, "ingest 300 ops over 50 compute capabilities", p.stderr)
    p = run([report, "-q", "--top", "15", db, page])
    check(p.returncode == 0, "fdx-report of many ops", p.stderr)
    if p.returncode != 0:
        return
    text = open(page, encoding="utf-8").read()
    shown_ops = set(re.findall(r'class="heat" data-op="([^"]*)"', text))
    shown_ccs = set(re.findall(r'class="heat" data-op="[^"]*" data-cc="([^"]*)"', text))
    top = set(sorted(sums, key=lambda o: (-sums[o], o))[:15])
    check(shown_ops and shown_ops <= top, "the heatmap's ops are the 15 with the most misses",
          str(sorted(shown_ops - top)[:5]))
    check(0 < len(shown_ccs) <= 24, "at most 24 compute capabilities", str(len(shown_ccs)))
    check("of 300 and 50." in text, "the page says how many ops and capabilities there are")


def check_trend_days(ingest, report, tmp):
    """Each trend's sparkline has one point a day, whichever keys have rows
    on it (the days of every key were once plotted for each key, and each
    line was drawn from all keys' rows: 200 keys over 30 days took 23 s)."""
    feed, db, page = (os.path.join(tmp, n) for n in ("days.jsonl", "days.db", "days.html"))
    keys, days = [f"key{i}" for i in range(6)], [f"2026-10-{d:02d}" for d in (1, 2, 3, 5, 8)]
    with open(feed, "w") as f:
        for k in keys:
            f.write(json.dumps({"schema": 2, "wanted": k, "fallback": {
                "backend": "Cuda", "op": "Gelu", "dtypes": ["F16"], "kernel_source": "s",
                "kernel_revision_hash": 1}, "count": 2, "hw": {
                "compute_capability": [8, 9], "hardware_sku": "sku",
                "driver_version": "1"}}) + "\n")
    for day in days:
        p = run([ingest, "-q", "--at", day, db, feed])
        check(p.returncode == 0, f"ingest the keys at {day}", p.stderr)
    p = run([report, "-q", db, page])
    check(p.returncode == 0, "fdx-report of keys over days", p.stderr)
    if p.returncode != 0:
        return
    text = open(page, encoding="utf-8").read()
    lines = re.findall(r'<polyline points="([^"]*)"', text)
    check(len(lines) == len(keys), "a sparkline for each key", str(len(lines)))
    xs = [[float(pt.split(",")[0]) for pt in line.split()] for line in lines]
    check(all(len(x) == len(days) for x in xs), "one point a day on each sparkline",
          str([len(x) for x in xs]))
    check(all(x == sorted(set(x)) for x in xs), "the days in order, each once", str(xs[:1]))
    ys = {pt.split(",")[1] for line in lines for pt in line.split()}
    check(len(ys) == 1, "the same misses each day: a flat line", str(ys))


def check_key_display(ingest, report, tmp):
    """An empty key and a key spelled "(unkeyed)" are told apart, and a key's
    controls (a right-to-left override, a newline) are shown, not obeyed,
    apart from a key spelling their escapes with a backslash; the data-key
    attribute keeps the key's exact text."""
    feed, db, page = (os.path.join(tmp, n) for n in ("keys.jsonl", "keys.db", "keys.html"))
    keys = ["", "(unkeyed)", "ab\u202ecd", "line\nbreak", "ab\\u202Ecd", "order \u061c1-2-3",
            "a\u200bb", "\ufeffk", "tag\U000e0041", "caf\u00e9", "k\ufe0f", "x\u206ay",
            "k", "k ", " k", "k\u00a0", "k\u3000", "a  b", "tail\u2800", "p\ue000q", "\u0600x",
            "n\ufdd0", "\u05d01", "1\u05d0"]
    with open(feed, "w") as f:
        for i, k in enumerate(keys):
            f.write(json.dumps({"schema": 2, "wanted": k, "fallback": {
                "backend": "Cuda", "op": "Gelu", "dtypes": ["F16"], "kernel_source": "s",
                "kernel_revision_hash": 1}, "count": 40 - i, "hw": {
                "compute_capability": [8, 9], "hardware_sku": "sku",
                "driver_version": "1"}}) + "\n")
    p = run([ingest, "-q", db, feed])
    check(p.returncode == 0, "ingest the keys", p.stderr)
    p = run([report, "-q", "-n", "50", db, page])
    check(p.returncode == 0, "fdx-report of the keys", p.stderr)
    if p.returncode != 0:
        return
    text = open(page, encoding="utf-8").read()
    shown = re.findall(r'<td class="key" data-key="([^"]*)">(.*?)</td>', text, re.S)
    got = dict(shown)
    check(got.get("") == "<i>(empty)</i>", "an empty key is said in italics", repr(got.get("")))
    check(got.get("(unkeyed)") == "(unkeyed)", "a key spelled (unkeyed) is its text")
    check(got.get("ab\u202ecd") == "ab\\u202Ecd", "a right-to-left override is shown",
          repr(got.get("ab\u202ecd")))
    check(got.get("line\nbreak") == "line\\u000Abreak", "a newline is shown",
          repr(got.get("line\nbreak")))
    check(got.get("ab\\u202Ecd") == "ab\\\\u202Ecd",
          "a key spelling an escape shows its backslash as \\\\", repr(got.get("ab\\u202Ecd")))
    shows = {"order \u061c1-2-3": "order \\u061C1-2-3", "a\u200bb": "a\\u200Bb",
             "\ufeffk": "\\uFEFFk", "tag\U000e0041": "tag\\U000E0041", "caf\u00e9": "caf\u00e9",
             "k\ufe0f": "k\\uFE0F", "x\u206ay": "x\\u206Ay", "k": "k", "k ": "k\\u0020",
             " k": "\\u0020k", "k\u00a0": "k\\u00A0", "k\u3000": "k\\u3000", "a  b": "a  b",
             "tail\u2800": "tail\\u2800", "p\ue000q": "p\\uE000q", "\u0600x": "\\u0600x",
             "n\ufdd0": "n\\uFDD0", "\u05d01": "\u05d01", "1\u05d0": "1\u05d0"}
    for key, want in shows.items():
        check(got.get(key) == want, "shown as %r" % want, repr(got.get(key)))
    check(re.search(r"\btd\{[^}]*white-space:pre-wrap", text) is not None,
          "runs of spaces in a cell keep their width", text[:2000])
    check(re.search(r"\btd\{[^}]*unicode-bidi:bidi-override", text) and
          re.search(r"svg text\{[^}]*white-space:pre;[^}]*unicode-bidi:bidi-override", text),
          "cells and labels show their characters in stored order, spaces kept: a right-to-left "
          "letter does not move a digit beside it", text[:2000])
    body = re.sub(r'data-key="[^"]*"', "", text)
    for hidden in "\u202e\u061c\u200b\ufeff\U000e0041":
        check(hidden not in body, "no U+%04X shows outside an attribute" % ord(hidden))


def check_heatmap_labels(ingest, report, tmp):
    """The heatmap's op labels read apart as the tables' values do: an empty op
    said in italics, a space at either end shown as an escape, runs of spaces
    kept (the label's title holds the op whole)."""
    feed, db, page = (os.path.join(tmp, n) for n in ("oplabels.jsonl", "oplabels.db", "oplabels.html"))
    ops = ["", " x", "x", "a  b", "a b"]
    with open(feed, "w") as f:
        for op in ops:
            f.write(json.dumps({"schema": 2, "wanted": "k", "fallback": {
                "backend": "Cuda", "op": op, "dtypes": ["F16"], "kernel_source": "s",
                "kernel_revision_hash": 1}, "count": 1, "hw": {
                "compute_capability": [8, 9], "hardware_sku": "sku",
                "driver_version": "1"}}) + "\n")
    p = run([ingest, "-q", db, feed])
    check(p.returncode == 0, "ingest the ops", p.stderr)
    p = run([report, "-q", db, page])
    check(p.returncode == 0, "fdx-report of the ops", p.stderr)
    if p.returncode != 0:
        return
    text = open(page, encoding="utf-8").read()
    got = dict(re.findall(r'<text x="4" y="\d+"><title>(.*?)</title>(.*?)</text>', text, re.S))
    want = {"": '<tspan font-style="italic">(empty)</tspan>', " x": "\\u0020x", "x": "x",
            "a  b": "a  b", "a b": "a b"}
    check(got == want, "each op's label", repr(got))


def ingest_and_report(ingest, report, feed, db, page, what, args=()):
    """Ingests feed into a new db and writes its page: the page's text, or None."""
    p = run([ingest, "-q", db, feed])
    check(p.returncode == 0, f"ingest {what}", p.stderr)
    p = run([report, "-q", *args, db, page])
    check(p.returncode == 0, f"fdx-report of {what}", p.stderr)
    return open(page, encoding="utf-8").read() if p.returncode == 0 else None


def check_zero_latency(ingest, report, tmp):
    """A candidate measured at 0 ns is the most regret of all (no ratio: the
    view's speedup is NULL): its row comes first, showing an infinite speedup,
    where it came last, blank, and -n 1 left it out."""
    feed, db, page = (os.path.join(tmp, n) for n in ("zero.jsonl", "zero.db", "zero.html"))

    def impl(source, rev):
        return {"backend": "Cuda", "op": "Gelu", "dtypes": ["F16"], "kernel_source": source,
                "kernel_revision_hash": rev}
    with open(feed, "w") as f:
        for key, best in (("k0", 0), ("k1", 2500)):
            f.write(json.dumps({"schema": 2, "structure_key": key, "chosen": impl("a", 1),
                                "candidates": [{"impl_id": impl("a", 1), "latency_ns": 5000},
                                               {"impl_id": impl("b", 2), "latency_ns": best}],
                                "count": 7, "hw": {"hardware_sku": "s",
                                                   "driver_version": "1"}}) + "\n")
    text = ingest_and_report(ingest, report, feed, db, page, "the zero latency", ("-n", "1"))
    if text is not None:
        rows = re.findall(r'<tr class="regret"><td class="key" data-key="([^"]*)">.*?'
                          r'data-speedup="([^"]*)">([^<]*)</td>', text, re.S)
        check(rows == [("k0", "inf", "\u221e")], "the 0 ns row first, its speedup infinite",
              repr(rows))


def check_regret_by_cell(ingest, report, tmp):
    """Two dispatch cells whose dtypes join to the same text (["F16,F32"] and
    ["F16","F32"]) are two cells of the regret table: taken for one, the
    second's fast choice hid the first's regret ("No regret measured")."""
    feed, db, page = (os.path.join(tmp, n) for n in ("joined.jsonl", "joined.db", "joined.html"))

    def impl(backend, dtypes):
        return {"backend": backend, "op": "Op", "dtypes": dtypes, "kernel_source": "k",
                "kernel_revision_hash": 1}
    with open(feed, "w") as f:
        for dtypes, cands in ((["F16,F32"], [("Cuda", 100), ("fast", 50)]),
                              (["F16", "F32"], [("Cuda", 10)])):
            f.write(json.dumps({"schema": 2, "structure_key": "R", "chosen": impl("Cuda", dtypes),
                                "candidates": [{"impl_id": impl(b, dtypes), "latency_ns": ns}
                                               for b, ns in cands],
                                "count": 7, "hw": {"hardware_sku": "s",
                                                   "driver_version": "1"}}) + "\n")
    text = ingest_and_report(ingest, report, feed, db, page, "the joined dtypes")
    if text is not None:
        rows = re.findall(r'<tr class="regret">.*?data-speedup="([^"]*)"', text, re.S)
        check(rows == ["2.0"], "the first cell's regret is shown", repr(rows))


def check_regret_rows_apart(ingest, report, tmp):
    """Regret rows of cells that differ read apart: a chosen implementation
    "Cuda/x" from source "lib" against "Cuda" from "x/lib" (the page joined
    them as Cuda/x/lib), and cells that differ only in dtypes, driver or the
    chosen revision (the page had no column for them)."""
    feed, db, page = (os.path.join(tmp, n) for n in ("apart.jsonl", "apart.db", "apart.html"))

    def impl(backend, source, dtypes=("F16",), rev=1):
        return {"backend": backend, "op": "Op", "dtypes": list(dtypes), "kernel_source": source,
                "kernel_revision_hash": rev}
    cells = ((impl("Cuda/x", "lib"), "1"), (impl("Cuda", "x/lib"), "1"),
             (impl("Cuda", "k", ("F32",)), "1"), (impl("Cuda", "k"), "2"),
             (impl("Cuda", "k", rev=2), "1"), (impl("Cuda", "k"), "1"))
    with open(feed, "w") as f:
        for chosen, driver in cells:
            f.write(json.dumps({"schema": 2, "structure_key": "R", "chosen": chosen,
                                "candidates": [{"impl_id": chosen, "latency_ns": 100},
                                               {"impl_id": impl("Fast", "f", chosen["dtypes"]),
                                                "latency_ns": 50}],
                                "count": 3, "hw": {"hardware_sku": "s",
                                                   "driver_version": driver}}) + "\n")
    text = ingest_and_report(ingest, report, feed, db, page, "the regret cells")
    if text is not None:
        rows = re.findall(r'<tr class="regret">(.*?)</tr>', text, re.S)
        check(len(rows) == len(cells) and len(set(rows)) == len(rows),
              "each cell's regret row reads apart", "\n".join(rows))
        check(any('data-chosen="Cuda/x">Cuda/x<br>lib<br>' in r for r in rows) and
              any('data-chosen="Cuda">Cuda<br>x/lib<br>' in r for r in rows),
              "backend and kernel source on lines of their own", "\n".join(rows))


def check_path_not_utf8(ingest, report, tmp):
    """A store path that is not UTF-8 is shown escaped: the page, which says
    it is UTF-8, was not."""
    db = os.path.join(os.fsencode(tmp), b"st\xff.db")
    page = os.path.join(tmp, "path.html")
    feed = os.path.join(tmp, "path.jsonl")
    with open(feed, "w") as f:
        f.write(json.dumps({"schema": 2, "wanted": "k", "fallback": {
            "backend": "Cuda", "op": "Gelu", "dtypes": ["F16"], "kernel_source": "s",
            "kernel_revision_hash": 1}, "count": 1, "hw": {
            "hardware_sku": "sku", "driver_version": "1"}}) + "\n")
    p = subprocess.run([ingest, "-q", db, feed], capture_output=True)
    check(p.returncode == 0, "ingest into a path that is not UTF-8", p.stderr)
    p = subprocess.run([report, "-q", db, page], capture_output=True)
    check(p.returncode == 0, "fdx-report of a path that is not UTF-8", p.stderr)
    if p.returncode == 0:
        raw = open(page, "rb").read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            text = ""
            check(False, "the page is UTF-8", str(e))
        check("st\\xFF.db" in text, "the byte is shown as \\xFF", text[:300])


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    ingest, report, runs, out_dir = sys.argv[1:]
    browser = find_chromium()
    check(browser is not None, "chromium is installed (scripts/deps.sh installs it)")
    with tempfile.TemporaryDirectory() as tmp:
        db = build_store(ingest, runs, tmp)
        page = os.path.join(tmp, "report.html")
        p = run([report, "-q", "--top", "15", db, page])
        check(p.returncode == 0 and p.stdout == "" and p.stderr == "",
              "fdx-report -q writes the page quietly", p.stderr)
        if p.returncode == 0 and browser:
            d = run(chromium_cmd(browser, os.path.join(tmp, "profile"), "--dump-dom",
                                 f"file://{page}"))
            check(d.returncode == 0 and "</html>" in d.stdout, "chromium renders the page",
                  d.stderr[-2000:])
            dom = Dom()
            dom.feed(d.stdout)
            check_page(page, dom, sql_expectations(db, 15))
            screenshots(browser, page, tmp, out_dir)
        check_failures(ingest, report, db, tmp)
        check_bounded_heatmap(ingest, report, tmp)
        check_key_display(ingest, report, tmp)
        check_heatmap_labels(ingest, report, tmp)
        check_regret_by_cell(ingest, report, tmp)
        check_regret_rows_apart(ingest, report, tmp)
        check_path_not_utf8(ingest, report, tmp)
        check_zero_latency(ingest, report, tmp)
        check_trend_days(ingest, report, tmp)
    return finish("report")


if __name__ == "__main__":
    sys.exit(main())
