"""Background threads of our own, never alive while the process forks.

A worker forked from a process with other threads holds whatever locks those threads held at that
moment (the allocator's, the interpreter's), a deadlock waiting to happen, and Python 3.12+ warns
on every such fork. The worker pools fork (closures over schedules cannot be pickled), so each thread
of ours (the Ctrl-C watcher, the progress clock) is a `Background`, and the pools start their
workers inside `paused()`: every such thread stopped and joined, started again once the workers
run, never in a child. A thread we do not own (Dask's client, in a process that ran a distributed
search) cannot be paused: then `alone()` is False and a pool does not fork (the ring prover's runs
its tasks in this process; the SAT portfolio starts its solvers from a fork server). OpenBLAS's
threads, numpy's, stop themselves at a fork.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Callable

_LIVE: set = set()      # every Background started and not stopped (running, or paused by a fork)
_HOOKED = False


class Background:
    """A daemon thread running `body(stopping)` until `stopping` is set; `wake()` makes a body that
    blocks (on a read) look at `stopping`. `start`/`stop` are the owner's; forks pause it."""

    def __init__(self, name: str, body: Callable[[threading.Event], None], wake: Callable[[], None] = lambda: None):
        self.name, self._body, self._wake = name, body, wake
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        _hook()

    def start(self) -> None:
        _LIVE.add(self)
        self._run()

    def stop(self) -> None:
        _LIVE.discard(self)
        self._halt()

    def _run(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stopping = threading.Event()
            self._thread = threading.Thread(target=self._body, args=(self._stopping,), daemon=True, name=self.name)
            self._thread.start()

    def _halt(self) -> None:
        thread = self._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            self._stopping.set()
            self._wake()
            thread.join()
            _gone(thread.native_id)
        self._thread = None


def _gone(native_id: int | None, patience: float = 0.1) -> None:
    """Wait (at most `patience` seconds) until the OS has ended a joined thread: `join` returns when
    its Python state is released, a moment before the OS thread exits (Linux's /proc shows it)."""
    task = f"/proc/self/task/{native_id}"
    deadline = time.monotonic() + patience
    while native_id is not None and os.path.exists(task) and time.monotonic() < deadline:
        time.sleep(0.0002)


@contextlib.contextmanager
def paused():
    """No thread of ours runs inside the block (the place to fork workers); they go on after it.
    (Python 3.13 counts a process's threads after a fork's at-fork hooks have run, so a thread
    restarted by such a hook would still be counted: the pause is around the forks instead.)"""
    live = list(_LIVE)
    for bg in live:
        bg._halt()
    try:
        yield
    finally:
        for bg in live:
            if bg in _LIVE:
                bg._run()


def alone() -> bool:
    """Inside `paused()`: does no other thread run (none of ours, none of a library's such as
    Dask's)? Only then may this process fork."""
    return threading.active_count() == 1


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's threads, and starts none of them again."""
    for bg in list(_LIVE):
        bg._thread = None
    _LIVE.clear()


def _hook() -> None:
    """Registered with the first Background made."""
    global _HOOKED
    if not _HOOKED:
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _HOOKED = True
