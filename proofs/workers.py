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
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
