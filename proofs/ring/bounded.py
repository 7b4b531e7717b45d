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


def _check_one(job, nm):
    schedule, properties = job
    n, m = nm
    found = check_trace(build_trace(schedule, n, m), properties)
    return n, m, {key: (fs[0] if fs else None) for key, fs in found.items()}


def check_sizes(schedule: Schedule, max_n: int, properties=None, max_m=None, jobs: int = 0,
                only: tuple | None = None):
    """Enumerate every (n, m) up to max_n (or the one size `only`): (property, phase) -> smallest
    failing (n, m, Finding) or None. `jobs`: worker processes (0: one per core)."""
    todo = [only] if only else sorted(sizes(max_n, max_m), reverse=True)   # largest first: slowest
    raw = fork_map(_check_one, (schedule, properties), todo, jobs, chunksize=4, min_items=9)
    verdicts: dict = {}
    for n, m, found in sorted(raw, key=lambda r: (r[0], r[1])):
        for key, f in found.items():
            if verdicts.get(key) is None:
                verdicts[key] = (n, m, f) if f is not None else None
    return verdicts
