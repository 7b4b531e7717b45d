"""Ctrl-C ends every command in 130 within a second and leaves no worker, whatever swallows it."""

import pytest

from helpers.cli import call


def _live(group: int) -> list[str]:
    import subprocess

    ps = subprocess.run(["ps", "-o", "pid=,stat=", "-g", str(group)], capture_output=True, text=True)
    return [line for line in ps.stdout.splitlines() if line.split()[1][0] != "Z"]


def _left(group: int, within: float = 0.5) -> list[str]:
    """The processes of `group` still alive `within` seconds after its leader ended (sooner once
    none is: a group whose leader has been reaped gains no process)."""
    import time

    end = time.monotonic() + within
    while (live := _live(group)) and time.monotonic() < end:
        time.sleep(0.05)
    return live


# The CPU a command has used before the interrupt (`_spent`): twice the imports and the checks'
# derivation (about 1 s of CPU), so the interrupt comes in the middle of the proofs on any load
SPENT = 2.0


def _spent(group: int, seconds: float, timeout: float = 60.0) -> None:
    """Wait until the processes of `group` have used `seconds` of CPU (or `timeout` has passed)."""
    import os
    import time

    tick = os.sysconf("SC_CLK_TCK")
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        used = 0
        for line in _live(group):
            try:
                with open(f"/proc/{line.split()[0]}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:          # ended meanwhile
                continue
            used += int(fields[11]) + int(fields[12])      # utime, stime
        if used >= seconds * tick:
            return
        time.sleep(0.1)


def _interrupting_command(monkeypatch, body):
    """`prove algo1` whose verification runs `body` instead (in this process)."""
    from ringproof.proofs.cli import verify

    monkeypatch.setattr(verify, "main", lambda argv, out, err: body())


def _ctrl_c():
    """What Python's SIGINT handler does (`prove`'s own); not a real signal, whose wakeup byte would
    also cancel Z3's context in this process for the tests that follow."""
    import signal

    from ringproof.proofs import interrupts

    interrupts._on_sigint(signal.SIGINT, None)


def test_a_ctrl_c_swallowed_by_a_finalizer_still_ends_in_130(monkeypatch):
    """Python cannot raise a KeyboardInterrupt inside __del__ (Z3's objects have one): the command
    must not go on to report what it computed, nor print the ignored exception."""
    class Finalized:
        def __del__(self):
            _ctrl_c()                 # inside the finalizer: Python cannot raise it here

    def body():
        Finalized()
        return 0

    _interrupting_command(monkeypatch, body)
    code, _, err = call("algo1")
    assert code == 130 and err.strip() == "prove: interrupted", err


def test_a_ctrl_c_swallowed_by_a_finalizer_stops_the_proofs_at_their_next_query(monkeypatch):
    """The solvers ask before each query whether a Ctrl-C came that nothing raised: the proofs after
    it do not run to their end (a per-m run went on for over a minute in CI)."""
    from ringproof.proofs.ring.properties import derive
    from ringproof.proofs.ring.smt import discharge
    from ringproof.schedules.algo1 import ALGO1
    done = []

    class Finalized:
        def __del__(self):
            _ctrl_c()

    checks = derive(ALGO1)

    def body():
        Finalized()
        for c in checks:      # the rest of a long run
            discharge(c)
        done.append(True)
        return 0

    _interrupting_command(monkeypatch, body)
    code, _, err = call("algo1")
    assert code == 130 and err.strip() == "prove: interrupted", err
    assert done == []
    assert discharge(checks[0]).verdict.value == "proved"      # after the command, a library call is not stopped


def test_an_error_after_a_ctrl_c_is_an_interrupt_not_an_internal_error(monkeypatch):
    """Z3 answers an interrupted call with its own error ("push canceled"), ctypes wraps a
    KeyboardInterrupt in ArgumentError: after a Ctrl-C, either is exit 130."""
    def body():
        try:
            _ctrl_c()
        except KeyboardInterrupt:
            raise RuntimeError("push canceled") from None
        return 0

    _interrupting_command(monkeypatch, body)
    code, _, err = call("algo1")
    assert code == 130 and err.strip() == "prove: interrupted", err
    code, _, _ = call("simulate", "algo1", "-n", "4", "-m", "2")     # the next command starts afresh
    assert code == 0


# It ended by SIGINT (-2) in a loaded full run: a Ctrl-C swallowed by a Z3 finalizer, or turned
# into ctypes' ArgumentError or Z3's "canceled" (the tests above), now all exit 130.
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_within_a_second_and_leaves_no_worker(jobs):
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it, in the middle of the
    parametric proofs (in-process Z3 with --jobs 1, a pool of workers with --jobs 2)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    prove = Path(sys.executable).parent / "prove"
    # per-m with many m: thousands of queries, still running when the interrupt comes
    proc = subprocess.Popen([str(prove), "algo2", "--tier", "per-m", "--max-m", "64", "--jobs", jobs], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _spent(proc.pid, SPENT)
    assert proc.poll() is None, "finished before the interrupt: the test would prove nothing"
    start = time.perf_counter()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    stopped = time.perf_counter() - start
    assert proc.returncode == 130 and err.strip() == "prove: interrupted", err
    assert stopped < 3.0, stopped          # a second idle; some slack for a loaded machine
    assert _left(proc.pid) == []


@pytest.mark.parametrize("argv, gap", [
    (["algo2", "--tier", "per-m", "--max-m", "64", "--jobs", "2"], 0.05),
    (["search", "masked", "-n", "5", "-m", "5"], 0.0),
    (["search", "masked", "-n", "5", "-m", "5"], 0.05),
], ids=["prove", "search-together", "search-apart"])
def test_a_second_ctrl_c_during_shutdown_exits_130_quietly(gap, argv):
    """Two Ctrl-Cs, the second `gap` seconds after the first, while the first unwinds (workers
    stopped, the line printed): 130, no KeyboardInterrupt traceback (the search's solver children
    printed pysat's), no worker left."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    prove = Path(sys.executable).parent / "prove"
    proc = subprocess.Popen([str(prove), *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _spent(proc.pid, SPENT)
    assert proc.poll() is None, "finished before the interrupt: the test would prove nothing"
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(gap)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:           # already gone: the first one's exit was quicker
        pass
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.strip() in ("", "prove: interrupted"), err
    assert _left(proc.pid) == []


def test_a_z3_object_cut_off_by_the_interrupt_prints_nothing_when_freed(capsys):
    """Ctrl-C inside a Z3 constructor leaves an object without its context; freed later (after
    `prove: interrupted` was printed) its finalizer failed with an AttributeError that Python printed
    as "Exception ignored in AstRef.__del__" (seen in CI). After a Ctrl-C such errors are the
    interrupt's: nothing is printed; before one, a finalizer's error is printed as Python would."""
    import sys

    import z3

    from ringproof.proofs import interrupts

    def half_built():
        obj = z3.BoolSortRef.__new__(z3.BoolSortRef)      # as if interrupted before `self.ctx = ...`
        obj.ast = None
        del obj

    hook = sys.unraisablehook
    try:
        sys.unraisablehook = interrupts._unraisable
        interrupts._REQUESTED.clear()
        half_built()
        assert "AttributeError" in capsys.readouterr().err
        interrupts._REQUESTED.set()
        half_built()
        assert capsys.readouterr().err == ""
    finally:
        interrupts._REQUESTED.clear()
        sys.unraisablehook = hook


# A second Ctrl-C whose handler ran inside the first's, while that held threading.Event's lock
# (`_REQUESTED.set()`), blocked on it for good: `prove search` hung after two Ctrl-Cs in CI.
_NESTED = r"""
import os, sys
from ringproof.proofs import interrupts

class Exited(BaseException):
    pass

def exit_(code):
    raise Exited(code)

os._exit = exit_                  # the handler's exit, seen here as an exception
interrupts._SECOND_EXITS = True
at = -1

def trace(frame, event, arg):
    frame.f_trace_opcodes = True
    frame.f_trace = step          # Python 3.13 traces no opcodes without it
    return step

def step(frame, event, arg):
    global at
    if event == "opcode":
        at -= 1
        if at == 0:               # the second signal arrives here: its handler runs in this frame
            sys.settrace(None)
            interrupts._on_sigint(2, None)
    return step

for k in range(1, 400):
    interrupts._REQUESTED.clear()
    at = k
    sys.settrace(trace)
    try:
        interrupts._on_sigint(2, None)
    except (KeyboardInterrupt, Exited):
        pass
    finally:
        sys.settrace(None)
    assert interrupts.requested(), k
    if at > 0:                    # the first handler ended before its k-th instruction
        print("ok", k)
        break
else:
    print("longer than expected")
"""


def test_a_ctrl_c_inside_the_handler_of_the_first_never_blocks():
    """A second SIGINT handler run at each instruction of the first (as Python runs a handler between
    any two): every run ends in KeyboardInterrupt or the quiet exit, none waits, and the interrupt
    is remembered. Both handlers take no lock."""
    import subprocess
    import sys

    try:
        run = subprocess.run([sys.executable, "-c", _NESTED], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("a second handler run inside the first blocked")
    assert run.returncode == 0 and run.stdout.startswith("ok"), run.stdout + run.stderr
    assert int(run.stdout.split()[1]) > 5, run.stdout       # the instructions were traced
