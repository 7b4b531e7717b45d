"""Z3 queries asked in a child process, each in a Z3 context of its own, under a resource limit and a
deadline that the parent enforces by ending the child.

Z3's own timeout and resource limit are not checked everywhere: a nonlinear gap query (issue 26)
ran for minutes past both. The child parses each query's SMT-LIB text into a fresh context, so what
this process asked Z3 before cannot change the answer either. One child per process, started on
first use and again after it was ended; it exits when its input is closed (the parent's exit).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading

from ringproof.errors import InternalError

COMMAND = [sys.executable, "-m", "ringproof.proofs.search.isolated"]
GRACE = 2.0                   # seconds past Z3's own timeout before the child is ended

_lock = threading.Lock()
_child: dict = {}             # pid of the process that started it -> its Popen


def check(smt2: str, *, rlimit: int, seconds: float) -> str:
    """'sat', 'unsat' or 'unknown' for the SMT-LIB assertions `smt2`: unknown when Z3 gives up
    (`rlimit` resource units, `seconds` of its timeout) or has not answered `GRACE` seconds after
    that, when the child is ended."""
    with _lock:
        proc = _running()
        try:
            proc.stdin.write(json.dumps({"smt2": smt2, "rlimit": rlimit, "timeout_ms": int(seconds * 1000)}) + "\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], seconds + GRACE)
            line = proc.stdout.readline() if ready else ""
        except BrokenPipeError:       # the child died
            line = ""
        except BaseException:         # Ctrl-C: its answer must not be read as the next query's
            _end(proc)
            raise
        if not line:                  # past the deadline, or the child died
            _end(proc)
            return "unknown"
    reply = json.loads(line)
    if "error" in reply:
        raise InternalError(f"Z3 child: {reply['error']}")
    return reply["answer"]


def _running() -> subprocess.Popen:
    proc = _child.get(os.getpid())   # a forked process starts its own, not sharing its parent's pipes
    if proc is None or proc.poll() is not None:
        proc = _child[os.getpid()] = subprocess.Popen(COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                      text=True, bufsize=1)
    return proc


def _end(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()
    _child.pop(os.getpid(), None)


def main() -> None:
    """The child: one JSON query per input line, one JSON answer per output line. Ctrl-C is the
    parent's to handle (it ends the child); a child whose parent is gone exits within a second,
    even in the middle of a query."""
    import signal
    import time

    import z3

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(0)
    threading.Thread(target=watch, daemon=True).start()
    for line in sys.stdin:
        q = json.loads(line)
        try:
            s = z3.Solver(ctx=z3.Context())
            s.set("rlimit", q["rlimit"])
            s.set("timeout", q["timeout_ms"])
            s.from_string(q["smt2"])
            reply = {"answer": str(s.check())}
        except z3.Z3Exception as e:
            reply = {"error": str(e)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
