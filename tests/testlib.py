"""What the Python end-to-end tests share: counting checks and the summary line."""
import subprocess
import sys
import threading

passed = failed = skipped = 0
_lock = threading.Lock()


def check(ok, what, detail=""):
    """Counts one check (from any thread); a failure is printed with what was seen."""
    global passed, failed
    with _lock:
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL: {what}\n{detail}", file=sys.stderr)


def skip(n, why):
    global skipped
    skipped += n
    print(f"skipped: {why}")


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def run_bounded(cmd, timeout):
    """Runs cmd; output as text (undecodable bytes replaced), exit -9 after timeout seconds."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, -9, "", f"timed out after {timeout} s")


def make_hot_journal(store, filler_rows=20000):
    """Leaves store as a writer killed mid-transaction in rollback-journal mode
    leaves it: pages of its transaction written into the store, the journal
    that undoes them beside it (the store changed, filler_rows of 500 bytes)."""
    code = ("import os, sqlite3, sys\n"
            "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "con.execute('PRAGMA journal_mode = DELETE')\n"
            "con.execute('PRAGMA cache_size = 8')\n"
            "con.execute('BEGIN')\n"
            "con.execute(\"UPDATE miss_cell SET count = count + 1\")\n"
            "con.execute('CREATE TABLE filler (x)')\n"
            "con.execute('INSERT INTO filler SELECT randomblob(500) FROM "
            "(WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) "
            "SELECT i FROM c)', (int(sys.argv[2]),))\n"
            "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", code, store, str(filler_rows)], check=True)


def finish(name):
    """Prints 'name: N passed, N failed[, N skipped]' and returns the exit status."""
    tail = f", {skipped} skipped" if skipped else ""
    print(f"{name}: {passed} passed, {failed} failed{tail}")
    return 1 if failed else 0
