"""Run independent tasks in forked worker processes, with no global state in parent or worker.

Workers fork from one thread (`ringproof.proofs.threads.paused`); in a process where a thread not ours
runs, the tasks run here, one after another, rather than risk a deadlocked child.

A task is any zero-argument callable, closures over schedules included: workers are forked, so they
inherit the task list and receive only indices; only results travel back (pickled). Tasks are handed
out one at a time in list order (put the long ones first); a task's exception is raised in the parent,
a result that cannot be pickled is an `InternalError` naming the task and the cause, and on any
exception (Ctrl-C included) the workers are terminated, so none outlives the call. `beside` runs
one task in a worker while the caller goes on, its exception before the caller's.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing as mp
import os
import pickle
import queue
import traceback

from ringproof.errors import InternalError
from ringproof.proofs.threads import alone, paused
from ringproof.proofs.workers import die_with_parent, starting


def workers(jobs: int) -> int:
    """Worker processes for `--jobs` (0: one per core)."""
    return jobs or os.cpu_count() or 1


def run_all(tasks: list, jobs: int = 0) -> list:
    """Each task's result, in task order."""
    n = min(workers(jobs), len(tasks))
    if n <= 1 or "fork" not in mp.get_all_start_methods():
        return [task() for task in tasks]
    ctx = mp.get_context("fork")
    todo, done = ctx.SimpleQueue(), ctx.Queue()
    for i in range(len(tasks)):
        todo.put(i)
    for _ in range(n):
        todo.put(None)
    procs = [ctx.Process(target=_work, args=(tasks, todo, done), daemon=True) for _ in range(n)]
    with paused(), starting():   # fork from one thread (proofs/threads.py), Ctrl-C held back (workers.py)
        if alone():
            for p in procs:
                p.start()
    if not any(p.pid for p in procs):   # another library's thread runs: a fork could deadlock
        return [task() for task in tasks]
    try:
        results: dict = {}
        while len(results) < len(tasks):
            try:
                i, ok, value = done.get(timeout=1.0)
            except queue.Empty:
                if not any(p.is_alive() for p in procs):
                    raise RuntimeError("the worker processes ended before finishing their tasks") from None
                continue
            if not ok:
                raise value
            results[i] = pickle.loads(value)
        return [results[i] for i in range(len(tasks))]
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join()


def run_named(tasks: dict, jobs: int = 0) -> dict:
    """Each task's result by its name: `tasks` maps names to zero-argument tasks, run as `run_all`
    runs them, in the dict's order."""
    return dict(zip(tasks, run_all(list(tasks.values()), jobs), strict=True))


@contextlib.contextmanager
def beside(task, jobs: int = 0):
    """Run `task` in a forked worker process while the block runs (here, at once, with one worker
    or where a fork could deadlock); the block gets `wait`, which returns the task's result or
    raises its exception. Where the block raises, the task's exception, if it raised one, is raised
    instead (the task's check comes first); the worker never outlives the block."""
    proc = None
    if workers(jobs) > 1 and "fork" in mp.get_all_start_methods():
        ctx = mp.get_context("fork")
        done = ctx.Queue()
        proc = ctx.Process(target=_work, args=([task], _Only(), done), daemon=True)
        with paused(), starting():
            if alone():
                proc.start()
    got: list = []                 # (ok, the result or the exception), once known
    if proc is None or not proc.pid:
        proc = None
        try:
            got.append((True, task()))
        except Exception as err:
            got.append((False, err))

    def outcome() -> tuple:
        while not got:
            try:
                _, ok, value = done.get(timeout=1.0)
                got.append((ok, pickle.loads(value) if ok else value))
            except queue.Empty:
                if not proc.is_alive():
                    raise RuntimeError("the worker process ended before finishing its task") from None
        return got[0]

    def wait():
        ok, value = outcome()
        if not ok:
            raise value
        return value

    try:
        yield wait
    except Exception:
        ok, value = outcome()
        if not ok:
            raise value from None
        raise
    finally:
        if proc is not None:
            if proc.is_alive():
                proc.terminate()
            proc.join()


class _Only:
    """The task queue of a worker with one task: index 0, then the end."""

    def __init__(self):
        self.left = [None, 0]

    def get(self):
        return self.left.pop()


def _work(tasks, todo, done):
    die_with_parent()
    gc.freeze()    # what the parent left is not this worker's garbage: its collections skip it
    while (i := todo.get()) is not None:
        try:
            value = tasks[i]()
        except Exception as err:  # raised again in the parent
            done.put((i, False, _portable(err)))
            continue
        try:    # here, not in the queue's feeder thread, which would drop the result with a traceback
            done.put((i, True, pickle.dumps(value)))
        except Exception as err:
            done.put((i, False, InternalError(f"task {i}'s result cannot be sent back from its worker process: "
                                              f"{type(err).__name__}: {err}")))


def _portable(err: Exception) -> Exception:
    """err itself if it survives pickling, else a RuntimeError carrying its traceback."""
    try:
        pickle.loads(pickle.dumps(err))
        return err
    except Exception:
        return RuntimeError("".join(traceback.format_exception(err)))
