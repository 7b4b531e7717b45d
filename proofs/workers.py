"""Worker processes that stop with the command: Ctrl-C is the parent's to handle (it terminates its
workers at once), and a worker whose parent dies (killed, or gone without cleaning up) dies with it."""

from __future__ import annotations

import contextlib
import ctypes
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child process: ignore Ctrl-C (the parent handles it) and get SIGKILL when the parent
    exits (Linux; elsewhere the parent's terminate() is the only stop)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})     # held back by `starting`
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@contextlib.contextmanager
def starting():
    """Around starting children that call `die_with_parent`: Ctrl-C is held back in the forked
    child until it ignores it, so a Ctrl-C in between cannot raise there (multiprocessing would print
    `Process ForkProcess-1:` and a traceback); the parent's other threads still take it."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
