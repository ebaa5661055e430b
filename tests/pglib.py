"""What the PostgreSQL tests share: the fixture cluster's URIs, psql, a fresh
database per section, the programs run bounded in a scratch directory with
generated feeds, and a store's counts per key."""
import json
import os
import subprocess
import sys
import tempfile

from testlib import run_bounded

LIMIT = 300  # seconds before a command counts as hung


class Tools:
    """The programs in bindir, run bounded; a scratch directory (tmp, j()); feeds
    gen_feed.py (gen_feed) writes there."""

    def __init__(self, bindir, gen_feed, prefix):
        self.bindir, self.gen_feed = bindir, gen_feed
        self.tmp = tempfile.mkdtemp(prefix=prefix)

    def fdx(self, name, *args):
        return run_bounded([os.path.join(self.bindir, name), *args], LIMIT)

    def j(self, *p):
        return os.path.join(self.tmp, *p)

    def gen(self, name, runs, seed, sample_seed, cells=150, lines=1200):
        out = self.j("feeds", name)
        subprocess.run([sys.executable, self.gen_feed, out, "--runs", str(runs), "--lines",
                        str(lines), "--cells", str(cells), "--seed", str(seed),
                        "--sample-seed", str(sample_seed)], check=True, capture_output=True)
        return sorted(os.path.join(out, d) for d in os.listdir(out))


class Cluster:
    def __init__(self, script, state, prefix):
        self.script, self.state, self.prefix, self.made = script, state, prefix, 0

    def uri(self, db, user="postgres", password=None):
        base = subprocess.run(["bash", self.script, "uri", self.state, db], capture_output=True,
                              text=True, check=True).stdout.strip()
        base = base.replace("user=postgres", f"user={user}")
        if password:
            base = base.replace("postgresql:///", f"postgresql://{user}:{password}@/")
        return base

    def psql(self, sql, db="postgres", user="postgres"):
        return subprocess.run(["psql", "-v", "ON_ERROR_STOP=1", "-qAtX", "-F", "\t",
                               self.uri(db, user), "-c", sql], capture_output=True, text=True)

    def new_db(self):
        self.made += 1
        name = f"{self.prefix}{self.made}"
        self.psql(f"DROP DATABASE IF EXISTS {name}")
        r = self.psql(f"CREATE DATABASE {name}")
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        return name


def totals(fdx, store):
    """Counts per key (fdx runs a tool); candidates left out: concurrent
    writers commit in any order, and the list set last wins."""
    out = {}
    for kind in ("misses", "dispatches"):
        r = fdx("fdx-export", "--kind", kind, store, "-")
        for line in r.stdout.splitlines():
            rec = json.loads(line)
            key = json.dumps({k: v for k, v in rec.items() if k not in ("count", "candidates")},
                             sort_keys=True)
            out[key] = rec.get("count", 1)
    return out
