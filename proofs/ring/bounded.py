"""The bounded tier: every check's concrete twin (`ringproof.proofs.ring.properties`), enumerated
for every (n, m) with m | n up to a bound.

Same definitions, same witnesses, evaluated on the numpy trace of `ringproof.model.ring.trace`
instead of in Z3: the exhaustive cross-check of every parametric verdict.
"""

from __future__ import annotations

from ringproof.model.ring.trace import build_trace
from ringproof.proofs.ring.pool import fork_map
from ringproof.proofs.ring.properties import check_trace
from ringproof.schedules.dsl import Schedule


def sizes(max_n: int, max_m: int | None = None):
    """All (n, m) with m | n, n ≤ max_n (and m ≤ max_m)."""
    return [(n, m) for n in range(1, max_n + 1) for m in range(1, n + 1)
            if n % m == 0 and (max_m is None or m <= max_m)]


def shapes(schedule: Schedule, max_n: int, max_m: int | None = None):
    """The (n, m, d) a sweep of `schedule` covers: d = n for a square schedule, else every d ≤ max_n
    with m | d too."""
    if schedule.square:
        return [(n, m, n) for n, m in sizes(max_n, max_m)]
    return [(n, m, d) for n, m in sizes(max_n, max_m) for d in range(m, max_n + 1, m)]


def _check_one(job, nmd):
    schedule, properties = job
    n, m, d = nmd
    found = check_trace(build_trace(schedule, n, m, d), properties)
    for fs in found.values():
        for f in fs:
            f.d = d
    return n, m, d, {key: (fs[0] if fs else None) for key, fs in found.items()}


def check_sizes(schedule: Schedule, max_n: int, properties=None, max_m=None, jobs: int = 0,
                only: tuple | None = None):
    """Enumerate every (n, m, d) up to max_n (`shapes`), or the one size `only` ((n, m) or
    (n, m, d); d = n if not given): (property, phase) -> smallest failing (n, m, Finding) or None;
    the Finding's `d` says at which d (= n for a square schedule). `jobs`: worker processes
    (0: one per core)."""
    if only:
        todo = [(only[0], only[1], only[2] if len(only) > 2 else only[0])]
    else:   # largest first: slowest
        todo = sorted(shapes(schedule, max_n, max_m), key=lambda t: t[0] * t[2], reverse=True)
    raw = fork_map(_check_one, (schedule, properties), todo, jobs, chunksize=4, min_items=9)
    verdicts: dict = {}
    for n, m, d, found in sorted(raw, key=lambda r: (r[0] + r[2], r[0], r[1])):
        for key, f in found.items():
            if verdicts.get(key) is None:
                verdicts[key] = (n, m, f) if f is not None else None
    return verdicts
