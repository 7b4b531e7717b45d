"""Load balance: active ops per PE, and their spread (max − min over the m PEs).

In the lock-step machine a PE whose guard is false in a cycle still spends it, so the cycle count
does not show imbalance; the active ops per PE do. The spread is derived for every n where each
phase is unguarded and its step runs on PE l (every PE does one op in every cycle of the phase:
spread 0), and checked against enumeration at every size up to n = 4 before it is reported; a
guarded phase leaves it underived (the reason says which), and the figures are then enumerated at
one size. A claim `notes={"claims": {"balance": "0"}}` is proved against the derived spread, or
refuted at the smallest size where the enumerated spread differs, or else unknown.
"""

from __future__ import annotations

import numpy as np
import sympy

from ringproof.model.ring.trace import build_trace
from ringproof.proofs.results import Counterexample, Verdict
from ringproof.schedules.expr import lift, var

CHECK_N = 4          # the derived spread is compared with enumeration at every size up to this n
FIGURE = (16, 4)     # (n, m) of the printed figures where the spread is not derived (or smaller)
CLAIM_N = 24         # a claim is compared with enumeration up to this n where nothing is derived


def per_pe(schedule, n: int, m: int, d: int | None = None) -> dict:
    """{op kind: [active ops on PE 1, ..., PE m]} of one size, enumerated on the trace."""
    out: dict = {}
    for pt in build_trace(schedule, n, m, d).phases:
        if pt.op.value == "MOVE":
            continue
        counts = np.bincount(np.asarray(pt.pe)[pt.active], minlength=m + 1)[1:m + 1]
        out[pt.op.value] = [a + int(b) for a, b in zip(out.get(pt.op.value, [0] * m), counts)]
    return out


def spread_of(table: dict) -> int:
    """max − min over PEs of the total active ops."""
    totals = [sum(col) for col in zip(*table.values())] if table else [0]
    return max(totals) - min(totals)


def _unguarded_on_l(phase) -> bool:
    from ringproof.proofs.ring.normalize import PARAMS
    from types import SimpleNamespace
    st = phase.step(PARAMS, SimpleNamespace(**{name: var(name) for name in phase.index_names}))
    pe = lift(st.pe)
    return st.guard is True and pe.op == "var" and pe.args[0] == "l"


def derived(schedule):
    """(spread as a sympy expression, "") when derived for every n, else (None, why not)."""
    busy = [p for p in schedule.phases if _generic_op(p) != "MOVE"]
    guarded = [p.name for p in busy if not _unguarded_on_l(p)]
    if guarded:
        few = len(guarded) == 1
        return None, f"phase{'' if few else 's'} {', '.join(guarded)} {'is' if few else 'are'} guarded or not on PE l"
    bad = next(((n, m, d) for n, m, d in schedule.shape.sizes(CHECK_N)
                if spread_of(per_pe(schedule, n, m, d)) != 0), None)
    if bad is not None:        # the derivation disagrees with enumeration: say so, never report it
        return None, f"derived spread 0 but enumerated {spread_of(per_pe(schedule, *bad))} at n={bad[0]}, m={bad[1]}"
    return sympy.Integer(0), ""


def _generic_op(phase) -> str:
    from ringproof.proofs.ring.normalize import PARAMS
    from types import SimpleNamespace
    return phase.step(PARAMS, SimpleNamespace(**{name: var(name) for name in phase.index_names})).op.value


def figure_size(schedule):
    """The size of the printed figures: (16, 4) if the schedule allows it, else the largest allowed
    size with n ≤ 16 and m ≤ 4."""
    sizes = [(n, m, d) for n, m, d in schedule.shape.sizes(FIGURE[0], FIGURE[1]) if d == n]
    return (FIGURE[0], FIGURE[1], FIGURE[0]) if (FIGURE[0], FIGURE[1], FIGURE[0]) in sizes else \
        max(sizes, key=lambda s: (s[1], s[0]), default=None)


def summary(schedule) -> dict:
    """{"spread": closed form or None, "reason", "at": {"n", "m", "per_pe", "spread"}} (JSON-ready)."""
    spread, why = derived(schedule)
    out = {"spread": None if spread is None else str(spread), "reason": why}
    if spread is None:
        size = figure_size(schedule)
        if size is not None:
            table = per_pe(schedule, *size)
            out["at"] = {"n": size[0], "m": size[1], "per_pe": table, "spread": spread_of(table)}
    return out


def check_claim(schedule, claim: str):
    """(verdict, reason, Counterexample or None) of a claimed spread."""
    want = sympy.sympify(claim, locals={"n": sympy.Symbol("n"), "m": sympy.Symbol("m")})
    spread, why = derived(schedule)
    if spread is not None and sympy.simplify(spread - want) == 0:
        return Verdict.PROVED, "", None
    for n, m, d in sorted(schedule.shape.sizes(CLAIM_N), key=lambda s: (s[0], s[1])):
        table = per_pe(schedule, n, m, d)
        got, claimed = spread_of(table), want.subs({"n": n, "m": m})
        if got != claimed:
            replay = {"confirmed": True, "count": "balance", "measured": got, "per_pe": table}
            return (Verdict.REFUTED, f"claim balance = {claim}: the enumerated spread is {got} at n={n}, m={m}",
                    Counterexample(n, m, "claim balance", f"enumerated spread {got}, claimed {claimed}", (),
                                   replay, d=schedule.shape.own("d", d)))
    return (Verdict.UNKNOWN, f"claim balance = {claim} agrees with enumeration for every n ≤ {CLAIM_N} only "
            f"(spread not derived: {why})", None)


def readable(details: dict) -> str:
    """One line for the table's foot."""
    if details.get("spread") is not None:
        return f"balance: spread (max − min active ops over PEs) = {details['spread']} for every n " \
               "(every PE does one op in every cycle)"
    at = details.get("at")
    if at is None:
        return f"balance: not derived ({details['reason']})"
    per = "; ".join(f"{k} per PE {'/'.join(map(str, v))}" for k, v in at["per_pe"].items() if any(v))
    return (f"balance: not derived for every n ({details['reason']}); at n={at['n']}, m={at['m']}: {per} "
            f"(spread {at['spread']})")
