"""Fan work out to forked worker processes, with no global state in the parent.

`fork_map(fn, shared, items)` calls `fn(shared, item)` for each item. `shared` (a schedule, its
checks: closures that cannot be pickled) reaches the workers by fork, through the pool's
initializer; only items and results are pickled. Workers are daemons and the pool is terminated on
any exception, Ctrl-C included, so none outlives the call.
"""

from __future__ import annotations

import multiprocessing as mp
import os

from ringproof.proofs.workers import die_with_parent

_shared = None   # set in each worker by _init, never in the parent


def _init(shared):
    global _shared
    _shared = shared
    die_with_parent()


def _call(args):
    fn, item = args
    return fn(_shared, item)


def workers(jobs: int) -> int:
    """The number of workers `--jobs` asks for (0: one per core)."""
    return jobs or os.cpu_count() or 1


def fork_map(fn, shared, items: list, jobs: int = 0, chunksize: int = 1, min_items: int = 2) -> list:
    """[fn(shared, item) for item in items], in order, on up to `jobs` forked workers."""
    n = min(workers(jobs), len(items))
    if n < 2 or len(items) < min_items or "fork" not in mp.get_all_start_methods():
        return [fn(shared, item) for item in items]
    pool = mp.get_context("fork").Pool(n, initializer=_init, initargs=(shared,))
    try:
        # map_async(...).get: a Ctrl-C in the parent interrupts the wait at once
        out = pool.map_async(_call, [(fn, item) for item in items], chunksize=chunksize).get(10 ** 7)
    except BaseException:
        pool.terminate()
        raise
    else:
        pool.close()
    finally:
        pool.join()
    return out
