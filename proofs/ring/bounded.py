"""The bounded tier: every check's concrete twin (`ringproof.proofs.ring.properties`), enumerated
for every (n, m) with m | n up to a bound.

Same definitions, same witnesses, evaluated on the numpy trace of `ringproof.model.ring.trace`
instead of in Z3: the exhaustive cross-check of every parametric verdict. The same pass counts each
size's cycles and active ops, which the counts tier compares with its closed forms.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, NamedTuple

from ringproof.model.ring.trace import Trace, build_trace
from ringproof.model.ring.vocabulary import forwards
from ringproof.proofs.ring.pool import run_named
from ringproof.proofs.ring.properties import check_trace
from ringproof.schedules.dsl import Op, Schedule


_FORK_FROM = 9       # fewer sizes run in this process: forking costs more than they take


def shapes(schedule: Schedule, max_n: int, max_m: int | None = None):
    """The (n, m, d) a sweep of `schedule` covers: every size its shape allows up to max_n."""
    return schedule.shape.sizes(max_n, max_m)


class Failing(NamedTuple):
    """The smallest size where a (property, phase) fails, and what its concrete twin found there
    (read as the tuple (n, m, finding) too)."""

    n: int
    m: int
    finding: object


@dataclass(frozen=True)
class AtSize:
    """What one size's trace showed: (property, phase) -> its first Finding or None, and the
    enumerated counts (`enumerated_counts`)."""

    found: dict
    counts: dict


@dataclass
class Sweep:
    """What a sweep found: `verdicts` (property, phase) -> the smallest `Failing` or None;
    `counts` (n, m, d) -> the enumerated {"cycles": int, "ops": {op: active iterations}}; `first`
    the result of the task run beside it (None without one)."""

    verdicts: dict
    counts: dict
    first: object = None


def enumerated_counts(trace: Trace) -> dict:
    """Cycles and ops per kind of one trace, as the ring machine tallies them: an op where its
    guard holds, a MOVE also where a cycle only forwards."""
    got: dict = {"cycles": trace.cycles, "ops": {op.value: 0 for op in Op}}
    for pt in trace.phases:
        got["ops"][pt.op.value] += int(pt.active.sum())
        got["ops"]["MOVE"] += int(forwards(pt.active, pt.send).sum())
    return got


def _check_one(job, nmd) -> AtSize:
    schedule, properties, checks = job
    n, m, d = nmd
    trace = build_trace(schedule, n, m, d)
    found = check_trace(trace, properties) if checks else {}
    for fs in found.values():
        for f in fs:
            f.d = d
    return AtSize({key: (fs[0] if fs else None) for key, fs in found.items()}, enumerated_counts(trace))


def sweep(schedule: Schedule, max_n: int, properties=None, max_m=None, jobs: int = 0,
          only: tuple | None = None, checks: bool = True, first: Callable | None = None) -> Sweep:
    """Enumerate every (n, m, d) up to max_n (`shapes`), or the one size `only` ((n, m) or
    (n, m, d); d = n if not given). `properties`: those to check (None: all); `checks` False:
    count only. The Finding's `d` says at which d (= n where the shape has no free d). `jobs`: worker
    processes (0: one per core); `first`: a zero-argument task run in the same pool before the
    sizes (the counts' closed forms)."""
    if only:
        todo = [(only[0], only[1], only[2] if len(only) > 2 else only[0])]
    else:   # largest first (a trace has about n·n·d iterations), one size per task: small ones fill in
        todo = sorted(shapes(schedule, max_n, max_m), key=lambda t: t[0] * t[0] * t[2], reverse=True)
    tasks = {nmd: partial(_check_one, (schedule, properties, checks), nmd) for nmd in todo}
    if first is not None:
        tasks = {"first": first, **tasks}
    done = run_named(tasks, jobs) if len(todo) >= _FORK_FROM else {name: task() for name, task in tasks.items()}
    head = done.pop("first", None)
    verdicts: dict = {}
    for n, m, d in sorted(done, key=lambda nmd: (nmd[0] + nmd[2], nmd[0], nmd[1])):
        for key, f in done[n, m, d].found.items():
            if verdicts.get(key) is None:
                verdicts[key] = Failing(n, m, f) if f is not None else None
    return Sweep(verdicts, {nmd: at.counts for nmd, at in done.items()}, head)


def check_sizes(schedule: Schedule, max_n: int, properties=None, max_m=None, jobs: int = 0,
                only: tuple | None = None):
    """`sweep(...).verdicts`: (property, phase) -> the smallest `Failing` or None."""
    return sweep(schedule, max_n, properties, max_m, jobs, only).verdicts
