"""Workers fork from one thread: our background threads stop inside `paused()` (where the pools
start their workers) and go on after it; a forked child starts none of them."""

from __future__ import annotations

import os
import threading
import warnings

import pytest

from ringproof.proofs.progress import Progress
from ringproof.proofs.ring.pool import run_all
from ringproof.proofs.threads import Background, paused


class _Terminal:
    def isatty(self):
        return True

    def write(self, text):
        pass

    def flush(self):
        pass


def _ours():
    return [t.name for t in threading.enumerate() if t.name in ("ticker", "progress")]


def test_paused_stops_every_background_thread_and_resumes_it():
    ticks = []
    bg = Background("ticker", lambda stopping: [ticks.append(1) for _ in iter(lambda: stopping.wait(0.01), True)])
    bg.start()
    with Progress(_Terminal()):
        assert sorted(_ours()) == ["progress", "ticker"]
        with paused():
            assert _ours() == []
        assert sorted(_ours()) == ["progress", "ticker"]
    bg.stop()
    assert _ours() == []


def test_a_pool_forks_with_no_other_thread_of_ours_and_without_a_warning():
    if threading.active_count() > 1:
        pytest.skip("a library's thread from an earlier test runs (Dask's): this process forks no more")
    bg = Background("ticker", lambda stopping: stopping.wait())
    bg.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)      # Python 3.12+: a threaded fork
            got = run_all([os.getpid, _ours] * 2, jobs=2)
        assert os.getpid() not in got[0::2]
        assert got[1::2] == [[], []]          # none of our threads came along into a worker
        assert _ours() == ["ticker"]          # and it runs again here
    finally:
        bg.stop()


def test_beside_a_thread_not_ours_a_pool_runs_its_tasks_here():
    stop = threading.Event()
    foreign = threading.Thread(target=stop.wait, daemon=True)
    foreign.start()
    try:
        assert run_all([os.getpid] * 3, jobs=2) == [os.getpid()] * 3
    finally:
        stop.set()
        foreign.join()
