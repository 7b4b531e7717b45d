"""Worker processes that stop with the command: Ctrl-C reaches only the parent, which terminates its
pool at once, and a worker whose parent dies (killed, or gone without cleaning up) dies with it."""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child process: ignore Ctrl-C (the parent handles it) and get SIGKILL when the parent
    exits (Linux; elsewhere the parent's terminate() is the only stop)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def can_fork() -> bool:
    return "fork" in mp.get_all_start_methods()


@contextlib.contextmanager
def worker_pool(processes: int):
    """A forked Pool whose workers die with the parent; terminated (not joined) on any exception,
    so Ctrl-C returns within a second whatever the workers are doing."""
    pool = mp.get_context("fork").Pool(processes, initializer=die_with_parent)
    try:
        yield pool
    except BaseException:
        pool.terminate()
        raise
    else:
        pool.close()
    finally:
        pool.join()


def pool_map(pool, fn, items, chunksize: int = 1) -> list:
    """pool.map that a KeyboardInterrupt in the parent interrupts at once."""
    return pool.map_async(fn, items, chunksize=chunksize).get(timeout=10 ** 7)
