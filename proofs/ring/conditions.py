"""The size conditions a schedule's proofs assume, each shown necessary by a concrete failure.

Every check is proved under m | n (and m | d where d is a parameter of its own). For each condition
this enumerates small sizes that break only it (k = n div m, kd = d div m as the formulas see
them) and returns the first failure the bounded checker finds; none found means the condition was
not shown to be needed up to that size.
"""

from __future__ import annotations

import numpy as np

from ringproof.errors import BadInput
from ringproof.model.ring.trace import trace_of
from ringproof.proofs.ring.properties import check_trace
from ringproof.proofs.results import Counterexample
from ringproof.schedules.dsl import Schedule, params

MAX_SIZE = 6


def conditions(schedule: Schedule, max_size: int = MAX_SIZE) -> list[dict]:
    """[{"condition", "counterexample" (Counterexample | None)}] for m | n, and m | d if d is free."""
    out = [{"condition": "m | n", "counterexample": _without(schedule, "n", max_size)}]
    if not schedule.square:
        out.append({"condition": "m | d", "counterexample": _without(schedule, "d", max_size)})
    if schedule.requires is not None:
        out.append({"condition": schedule.requirement(),
                    "counterexample": _without(schedule, "requires", 2 * max_size)})
    return out


def _sizes(schedule: Schedule, which: str, max_size: int):
    """(n, d, m) that break `which` ∈ {"n", "d", "requires"} of m | n, m | d (m ≥ 2) and the
    schedule's side condition (m | n and m | d kept) and nothing else; smallest n + d first."""
    out = []
    for n in range(1, max_size + 1):
        for d in ((n,) if schedule.square else range(1, max_size + 1)):
            if which == "requires":
                out += [(n, d, m) for m in range(1, min(n, d) + 1)
                        if n % m == 0 and d % m == 0 and not schedule.admits(n, m, d)]
                continue
            for m in range(2, max(n, d) + 1):
                breaks_n, breaks_d = n % m != 0, d % m != 0
                if (which == "n" and breaks_n and (schedule.square or not breaks_d)) or \
                        (which == "d" and breaks_d and not breaks_n and schedule.admits(n, m, d)):
                    out.append((n, d, m))
    return sorted(out, key=lambda t: (t[0] + t[1], t[0], t[2]))


def _without(schedule: Schedule, which: str, max_size: int) -> Counterexample | None:
    for n, d, m in _sizes(schedule, which, max_size):
        try:
            with np.errstate(divide="ignore", invalid="ignore"):     # k or kd may be 0 here
                found = [fs[0] for fs in check_trace(trace_of(schedule, params(n, m, d=d))).values() if fs]
        except BadInput:          # the schedule's functions are undefined at this size: try another
            continue
        if found:
            f = found[0]
            return Counterexample(n, m, f"{f.property} / {f.phase}: {f.check}", f.message,
                                  f.iterations, d=None if schedule.square else d)
    return None
