"""What the PostgreSQL tests share: the fixture cluster's URIs, psql, a fresh
database per section, and a store's counts per key."""
import json
import subprocess


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
