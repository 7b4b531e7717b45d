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
from ringproof.schedules.shape import RING

MAX_SIZE = 6


def conditions(schedule: Schedule, max_size: int = MAX_SIZE) -> list[dict]:
    """[{"condition", "counterexample" (Counterexample | None)}] for m | n, and m | d if d is free."""
    out = [{"condition": f"{RING} | {e}", "counterexample": _without(schedule, e, max_size)}
           for e in schedule.shape.free]
    if schedule.requires is not None:
        out.append({"condition": schedule.requirement(),
                    "counterexample": _without(schedule, "requires", 2 * max_size)})
    return out


def _without(schedule: Schedule, which: str, max_size: int) -> Counterexample | None:
    for n, d, m in schedule.shape.breaking(which, max_size):
        try:
            with np.errstate(divide="ignore", invalid="ignore"):     # k or kd may be 0 here
                found = [fs[0] for fs in check_trace(trace_of(schedule, params(n, m, d=d))).values() if fs]
        except BadInput:          # the schedule's functions are undefined at this size: try another
            continue
        if found:
            f = found[0]
            return Counterexample(n, m, f"{f.property} / {f.phase}: {f.check}", f.message,
                                  f.iterations, d=schedule.shape.own("d", d))
    return None
