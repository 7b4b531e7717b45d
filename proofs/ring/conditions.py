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
from ringproof.proofs.results import Counterexample, Result, Verdict
from ringproof.schedules.dsl import Schedule, params
from ringproof.schedules.shape import RING

MAX_SIZE = 6
FEW = 24            # the largest free size of a finite set of admitted sizes `admitted` lists


def conditions(schedule: Schedule, max_size: int = MAX_SIZE) -> list[dict]:
    """[{"condition", "counterexample" (Counterexample | None)}] for m | n, and m | d if d is free;
    a side condition that admits finitely many sizes names them in its "condition" (`admitted`;
    the sizes under "sizes", the condition as written under "written")."""
    out = [{"condition": f"{RING} | {e}", "counterexample": _without(schedule, e, max_size)}
           for e in schedule.shape.free]
    if schedule.requires is not None:
        kind, sizes = admitted(schedule)
        text = schedule.requirement()
        if kind == "none":
            text += " (admits no size)"
        elif kind == "finite":
            text += f" (admits only {_listed(schedule, sizes)})"
        out.append({"condition": text, "written": schedule.requirement(),
                    "counterexample": _without(schedule, "requires", 2 * max_size),
                    **({"sizes": [list(x) for x in sizes]} if kind in ("none", "finite") else {})})
    return out


def admitted(schedule: Schedule, few: int = FEW) -> tuple[str, list]:
    """Which sizes the side condition admits, as Z3 shows it over every size (m | each extent):
    ("none", []) where no size satisfies it; ("finite", [(n, m, d), ...]) where every size it
    admits has its free extents ≤ `few` (listed by enumeration); ("many", []) where some size
    beyond satisfies it, or where Z3 cannot tell (its formula outside what `nests.to_z3`
    translates, or an unknown answer). Without a side condition, ("many", [])."""
    if schedule.requires is None:
        return "many", []
    import z3

    from ringproof.proofs.figures.nests import KD, K, M, NoZ3, side_condition, to_z3
    env = {K: z3.Int("k"), M: z3.Int("m"), KD: z3.Int("kd")}
    try:
        cond = to_z3(side_condition(schedule.shape), env)
    except NoZ3:
        return "many", []
    free = [env[K] * env[M]] + ([env[KD] * env[M]] if schedule.shape.is_free("d") else [])

    def check(*more):
        s = z3.Solver()
        s.set("timeout", 5000)
        s.add(env[K] >= 1, env[M] >= 1, env[KD] >= 1, cond, *more)
        return s.check()

    if check() == z3.unsat:
        return "none", []
    if check(z3.Or(*[x > few for x in free])) == z3.unsat:
        return "finite", schedule.shape.sizes(few)
    return "many", []


def vacuous(schedule: Schedule, properties, tier: str) -> list[Result]:
    """Where no size satisfies the side condition (`admitted`): each property asked for, on each of
    its phases, `unknown` and saying so -- a statement about no size is proved of nothing."""
    from ringproof.proofs.ring.properties import derive
    why = f"vacuous: no size satisfies the side condition {schedule.requirement()} (Z3)"
    rows = list(dict.fromkeys((c.property, c.phase) for c in derive(schedule) if c.property in properties))
    rows += [(p, "all") for p in properties if p not in {prop for prop, _ in rows}]
    return [Result(prop, phase, Verdict.UNKNOWN, tier, 0.0, why) for prop, phase in rows]


def _listed(schedule: Schedule, sizes: list) -> str:
    """'n=2, m=1; n=2, m=2' (with d where it is free)."""
    return "; ".join(Counterexample(n, m, "", "", d=schedule.shape.own("d", d)).sizes() for n, m, d in sizes)


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
