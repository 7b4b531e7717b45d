"""Run independent tasks in forked worker processes, with no global state in parent or worker.

Workers fork from one thread (`ringproof.proofs.threads.paused`); in a process where a thread not ours
runs, the tasks run here, one after another, rather than risk a deadlocked child.

A task is any zero-argument callable, closures over schedules included: workers are forked, so they
inherit the task list and receive only indices; only results travel back (pickled). Tasks are handed
out one at a time in list order (put the long ones first); a task's exception is raised in the parent,
a result that cannot be pickled is an `InternalError` naming the task and the cause, and on any
exception (Ctrl-C included) the workers are terminated, so none outlives the call.
"""

from __future__ import annotations

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
