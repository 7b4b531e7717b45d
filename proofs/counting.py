"""Closed-form op and cycle counts (sympy), derived from the loop nests.

A phase takes one cycle per tuple of its sequential loops, so its cycle count is the nested sum of
its loop extents; an unguarded phase does m ops per cycle. Sums are exact symbolic summation of the
bounds the schedule declares (no sampling). Claims a schedule states (e.g. the paper's cycle count)
are checked against the derived forms.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import sympy

from schedules.dsl import Op, Phase, Schedule, Step
from schedules.expr import var

N, M = sympy.symbols("n m", positive=True, integer=True)
SYM = SimpleNamespace(n=N, m=M, k=N / M, d=N)


def phase_cycles(phase: Phase, P=SYM) -> sympy.Expr:
    def count(i, ns):
        if i == len(phase.loops):
            return sympy.Integer(1)
        lp = phase.loops[i]
        lo, hi = lp.bounds(P, SimpleNamespace(**ns))
        v = sympy.Symbol(f"_{lp.name}", integer=True)
        inner = count(i + 1, {**ns, lp.name: v})
        if v not in inner.free_symbols:
            return sympy.Max(hi - lo + 1, 0) * inner if not _nonneg(hi - lo + 1) else (hi - lo + 1) * inner
        return sympy.summation(inner, (v, lo, hi))

    return sympy.factor(sympy.simplify(count(0, {})))


def _nonneg(e) -> bool:
    return bool(sympy.ask(sympy.Q.nonnegative(e), sympy.Q.positive(N) & sympy.Q.positive(M)) or
                (e.is_nonnegative is True))


def _shape(phase: Phase) -> Step:
    """The step on symbolic Terms: enough to read its op kind and whether it is guarded, without
    building (and simplifying) every index formula in sympy."""
    P = SimpleNamespace(**{name: var(name) for name in ("n", "m", "k", "d")})
    return phase.step(P, SimpleNamespace(**{name: var(name) for name in phase.index_names}))


def phase_ops(phase: Phase, P=SYM) -> sympy.Expr | None:
    """Ops of an unguarded phase (cycles · m); None where a guard needs the coverage bijection."""
    if _shape(phase).guard is True:
        return sympy.factor(phase_cycles(phase, P) * P.m)
    return None


@dataclass(frozen=True)
class Counts:
    cycles: sympy.Expr
    phase_cycles: dict
    ops: dict                   # Op name -> closed form (None: not derived)
    utilization: sympy.Expr | None

    def at(self, n: int, m: int) -> dict:
        sub = {N: n, M: m}
        return {"cycles": int(self.cycles.subs(sub).doit()),
                "ops": {k: (int(v.subs(sub).doit()) if v is not None else None) for k, v in self.ops.items()}}


def counts(schedule: Schedule) -> Counts:
    per_phase = {p.name: phase_cycles(p) for p in schedule.phases}
    ops: dict = {op.value: sympy.Integer(0) for op in Op}
    for p in schedule.phases:
        kind = _shape(p).op.value
        c = phase_ops(p)
        ops[kind] = None if (c is None or ops[kind] is None) else sympy.factor(ops[kind] + c)
    total = sympy.factor(sum(per_phase.values()))
    arith = [ops[k] for k in ("MAC", "EAC", "DIV")]
    util = None if None in arith else sympy.simplify(sum(arith) / (M * total))
    return Counts(total, per_phase, ops, util)


def closed(e: sympy.Expr) -> bool:
    """Is e a closed form? (A sum sympy could not evaluate stays a `Sum`.)"""
    return not e.has(sympy.Sum)


def claim_at(claim: str, n: int, m: int) -> int:
    """The value of a claimed closed form at (n, m)."""
    return int(sympy.sympify(claim, locals={"n": N, "m": M}).subs({N: n, M: m}))


def check_claim(derived: sympy.Expr, claim: str, max_n: int = 24):
    """None if `claim` equals `derived` for all n, m; else the smallest (n, m, derived, claimed),
    or (None, None, derived, claimed) when no size up to max_n tells them apart."""
    c = sympy.sympify(claim, locals={"n": N, "m": M})
    if closed(derived) and sympy.simplify(derived - c) == 0:
        return None
    for n in range(1, max_n + 1):
        for m in range(1, n + 1):
            if n % m == 0:
                got, want = derived.subs({N: n, M: m}).doit(), c.subs({N: n, M: m})
                if got != want:
                    return n, m, got, want
    return (None, None, derived, c)
