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


def finish(name):
    """Prints 'name: N passed, N failed[, N skipped]' and returns the exit status."""
    tail = f", {skipped} skipped" if skipped else ""
    print(f"{name}: {passed} passed, {failed} failed{tail}")
    return 1 if failed else 0
