"""Load balance: active ops per PE, and their spread (max − min over the m PEs).

In the lock-step machine a PE whose guard is false in a cycle still spends it, so the cycle count
does not show imbalance; the active ops per PE do. They are derived in closed form in n, m (d) and
the PE index l: each phase's guarded loop nest is counted exactly with l kept symbolic
(`nests.count(..., keep=1)`, its mod-m and block/chunk digits split by `nests.lifted` and the
digit rule, each split proved), for phases whose op runs on PE l. Every per-PE form is compared
with enumeration on the trace at every size n, d ≤ 12 before it is used (a disagreement is an
internal error). The spread is then proved for every n by Z3 over 1 ≤ l ≤ m (under the schedule's
side condition): 0 where total(l) = total(1) for every l; total(m) − total(1) where total(l + 1) ≥
total(l) for every l < m (the extreme PEs are 1 and m); total(1) − total(m) where it never grows;
otherwise, or where a form is not derived, `unknown` with the reason, and the figures are
enumerated at one size. A claim `notes={"claims": {"balance": "..."}}` is proved equal to the
derived spread, refuted at the smallest size where the enumerated spread differs, or else unknown.
"""

from __future__ import annotations

import numpy as np
import sympy

from ringproof.errors import InternalError
from ringproof.model.ring.trace import active_per_pe, build_trace
from ringproof.proofs.results import Counterexample, Verdict
from ringproof.schedules.expr import lift

FIGURE = (16, 4)     # (n, m) of the printed figures where the spread is not derived (or smaller)
CLAIM_N = 24         # a claim is compared with enumeration up to this n where nothing is derived
L = sympy.Symbol("l", integer=True)


def per_pe(schedule, n: int, m: int, d: int | None = None, by: str = "op") -> dict:
    """{op kind (by="op") or phase name (by="phase"): [active ops on PE 1, ..., PE m]} of one size,
    enumerated on the trace."""
    out: dict = {}
    for pt in build_trace(schedule, n, m, d).phases:
        if pt.op.value == "MOVE":
            continue
        key = pt.op.value if by == "op" else pt.phase.name
        counts = np.bincount(np.asarray(pt.pe)[pt.active], minlength=m + 1)[1:m + 1]
        out[key] = [a + int(b) for a, b in zip(out.get(key, [0] * m), counts)]
    return out


def spread_of(table: dict) -> int:
    """max − min over PEs of the total active ops."""
    totals = [sum(col) for col in zip(*table.values())] if table else [0]
    return max(totals) - min(totals)


def forms(schedule, session=None):
    """({op kind: active ops on PE l, a closed form in k, m, kd and l}, {phase: its form}, why not)
    -- ({}, {}, reason) where some phase's form is not derived. Each phase's form is checked by
    enumeration (module doc). Found under the session's budget (None: a fresh session under the
    default budget) and kept in it where derived."""
    from ringproof.proofs.ring.counting import _condition, _nest, _shape, exact_chunks, parameters, with_parameters
    from ringproof.proofs.ring.nests import Decider, Unknown, count, lifted
    session = _session(session)
    hit = session.balanced.get(id(schedule))
    if hit is not None and hit[0] is schedule:
        return hit[1]
    P = with_parameters(schedule, parameters(schedule.shape))
    decider = Decider(schedule.shape, session.budget)
    out, phases, why = {}, {}, ""
    for phase in schedule.phases:
        st = _shape(phase)
        if st.op.value == "MOVE":
            continue
        pe = lift(st.pe)
        if not (pe.op == "var" and pe.args[0] == "l"):
            why = f"phase {phase.name}: its op does not run on PE l"
            break
        loops, env = _nest(phase, P, True)
        loops = [loops[-1]] + loops[:-1]           # l outermost, kept
        try:
            cond = lifted(sympy.sympify(_condition(st.guard, env, P)), loops, decider)
            got = count(loops, cond, decider, keep=1)
        except Unknown as e:
            why = f"phase {phase.name}: {e}"
            break
        phases[phase.name] = (st.op.value, got)
    exact = exact_chunks(schedule)
    phases = {name: (kind, sympy.expand(v.xreplace(exact))) for name, (kind, v) in phases.items()}
    if why:
        result = ({}, {}, why)
    else:
        _check(schedule, phases)
        for kind, form in phases.values():
            out[kind] = sympy.expand(out.get(kind, 0) + form)
        result = (out, {name: form for name, (_, form) in phases.items()}, "")
        session.balanced[id(schedule)] = (schedule, result)   # a why may be a solver's unknown: not kept
    return result


def _session(session):
    from ringproof.proofs.ring.session import Session
    return session if session is not None else Session()


def _compile(form, least=()):
    """The form as a Python function of (k, m, kd, l and the `least` symbols: derived parameters
    defined by a condition), compiled once."""
    from ringproof.proofs.ring.nests import KD, K, M
    return sympy.lambdify((K, M, KD, L, *least), form.doit(), modules=["math"])


def _on_pes(fn, n: int, m: int, d: int, least=()) -> list:
    """A compiled form's values on PEs 1..m at one size: integers, or the value itself where it is
    not within 1e-9 of one (at these sizes a non-integer value of a rational form is much further
    than that from any integer, so it never passes for one)."""
    out = []
    for l in range(1, m + 1):
        v = fn(n // m, m, d // m, l, *least)
        out.append(int(round(v)) if abs(v - round(v)) < 1e-9 else v)
    return out


def _check(schedule, phases: dict) -> None:
    """Each phase's per-PE form against enumeration (its guard and PE at every iteration) at every
    size n, d ≤ 12: InternalError at the first disagreement."""
    from ringproof.proofs.ring.counting import check_sizes, in_n_m_d, least_at
    from ringproof.schedules.dsl import params, with_derived
    names = tuple(least_at(schedule.shape, *check_sizes(schedule.shape)[0]))   # symbols of a Least, if any
    compiled = {name: _compile(form, names) for name, (_, form) in phases.items()}
    for n, m, d in check_sizes(schedule.shape):
        P = with_derived(schedule.derived, params(n, m, d=d))
        least = [int(v) for v in least_at(schedule.shape, n, m, d).values()]
        for name, (kind, form) in phases.items():
            want = active_per_pe(schedule.phase(name), P, m)
            got = _on_pes(compiled[name], n, m, d, least)
            if got != want:
                raise InternalError(f"balance: phase {name}: the derived {kind} on PE l, {in_n_m_d(form)}, gives "
                                    f"{got} at n={n}, m={m}, d={d}; enumeration {want}")


def _always(decider, e, low, high) -> bool:
    """Is e ≤ 0 for every l in [low, high] (and every size)? Shown by the counter's decider."""
    num, den = sympy.fraction(sympy.together(sympy.expand(e)))
    if not (den.is_Integer and den > 0):
        return False
    return decider.holds(sympy.expand(num), ((L, low, high),))


def derived(schedule, session=None):
    """(spread as a sympy expression in n, m, d, "") when proved for every n, else (None, why not)."""
    from ringproof.proofs.ring.counting import in_n_m_d, tidy
    from ringproof.proofs.ring.nests import M, Decider
    session = _session(session)
    per, _, why = forms(schedule, session)
    if why:
        return None, why
    total = sum(per.values(), sympy.Integer(0))
    decider = Decider(schedule.shape, session.budget)
    first, last = total.subs(L, 1), total.subs(L, M)
    if _always(decider, total - first, 1, M) and _always(decider, first - total, 1, M):
        return sympy.Integer(0), ""
    step = total.subs(L, L + 1) - total
    if _always(decider, -step, 1, M - 1):
        return tidy(in_n_m_d(last - first)), ""
    if _always(decider, step, 1, M - 1):
        return tidy(in_n_m_d(first - last)), ""
    return None, "the active ops on PE l are not shown constant or monotone in l (Z3)"


def figure_size(schedule):
    """The size of the printed figures: (16, 4) if the schedule allows it, else the largest allowed
    size with n ≤ 16 and m ≤ 4."""
    sizes = [(n, m, d) for n, m, d in schedule.shape.sizes(FIGURE[0], FIGURE[1]) if d == n]
    return (FIGURE[0], FIGURE[1], FIGURE[0]) if (FIGURE[0], FIGURE[1], FIGURE[0]) in sizes else \
        max(sizes, key=lambda s: (s[1], s[0]), default=None)


def summary(schedule, session=None) -> dict:
    """{"spread": closed form or None, "reason", "per_pe": {kind: form in n, m, d, l} and
    "per_phase": {phase: form} where derived, "at": {"n", "m", "per_pe", "spread"} where the spread is not derived} (JSON-ready)."""
    from ringproof.proofs.ring.counting import in_n_m_d, tidy
    spread, why = derived(schedule, session)
    out = {"spread": None if spread is None else str(spread), "reason": why}
    per, by_phase, _ = forms(schedule, session)
    if per:
        out["per_pe"] = {k: str(tidy(in_n_m_d(v))) for k, v in per.items()}
        out["per_phase"] = {k: str(tidy(in_n_m_d(v))) for k, v in by_phase.items()}
    if spread is None:
        size = figure_size(schedule)
        if size is not None:
            table = per_pe(schedule, *size)
            out["at"] = {"n": size[0], "m": size[1], "per_pe": table, "spread": spread_of(table)}
    return out


def check_claim(schedule, claim: str, session=None):
    """(verdict, reason, Counterexample or None) of a claimed spread."""
    from ringproof.proofs.ring import counting
    spread, why = derived(schedule, session)
    if spread is not None:
        bad = counting.check_claim(spread, claim, shape=schedule.shape,
                                   derived_params=counting.derived_parameters(schedule))
        if bad is None:
            return Verdict.PROVED, "", None
        if bad[0] is None:
            return (Verdict.UNKNOWN, f"claim balance = {claim} not shown equal to the derived spread {spread}, "
                    f"nor told apart up to n = {counting.claim_bound(schedule.shape)[0]}", None)
        sizes = [bad[:3]]
    else:
        want = counting.parse_claim(claim, schedule.shape, counting.derived_parameters(schedule))
        sizes = [(n, m, d) for n, m, d in sorted(schedule.shape.sizes(CLAIM_N), key=lambda s: (s[0], s[1]))
                 if spread_of(per_pe(schedule, n, m, d)) != want.subs({counting.N: n, counting.M: m, counting.D: d,
                                                                       **counting.least_at(schedule.shape, n, m, d)})]
    if not sizes:
        return (Verdict.UNKNOWN, f"claim balance = {claim} agrees with enumeration for every n ≤ {CLAIM_N} only "
                f"(spread not derived: {why})", None)
    n, m, d = sizes[0]
    want = counting.parse_claim(claim, schedule.shape, counting.derived_parameters(schedule))
    claimed = want.subs({counting.N: n, counting.M: m, counting.D: d, **counting.least_at(schedule.shape, n, m, d)})
    table = per_pe(schedule, n, m, d)
    got = spread_of(table)
    if got == claimed:          # the derived spread disagrees with the trace: never report it
        raise InternalError(f"balance: the derived spread {spread} differs from the claim at n={n}, m={m}, "
                            f"but the enumerated spread {got} agrees")
    replay = {"confirmed": True, "count": "balance", "measured": got, "per_pe": table}
    return (Verdict.REFUTED, f"claim balance = {claim}: the enumerated spread is {got} at n={n}, m={m}",
            Counterexample(n, m, "claim balance", f"enumerated spread {got}, claimed {claimed}", (),
                           replay, d=schedule.shape.own("d", d)))


def readable(details: dict) -> str:
    """One line for the table's foot."""
    per = "; ".join(f"{k} {v}" for k, v in details.get("per_pe", {}).items() if v != "0")
    on_l = f"active ops on PE l: {per}; " if per else ""
    if details.get("spread") is not None:
        return f"balance: {on_l}spread (max − min active ops over PEs) = {details['spread']} for every n"
    at = details.get("at")
    if at is None:
        return f"balance: {on_l}spread not derived ({details['reason']})"
    fig = "; ".join(f"{k} per PE {'/'.join(map(str, v))}" for k, v in at["per_pe"].items() if any(v))
    return (f"balance: {on_l}spread not derived for every n ({details['reason']}); at n={at['n']}, m={at['m']}: "
            f"{fig} (spread {at['spread']})")
