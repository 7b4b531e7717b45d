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
    bijections: tuple = ()      # phases whose op count rests on their coverage being proved
    phase_utilization: dict = None   # phase -> its ops / (m · its cycles), where derived

    def at(self, n: int, m: int) -> dict:
        sub = {N: n, M: m}
        return {"cycles": int(self.cycles.subs(sub).doit()),
                "ops": {k: (int(v.subs(sub).doit()) if v is not None else None) for k, v in self.ops.items()}}


def required_count(eqn, P=SYM) -> sympy.Expr | None:
    """|{terms of eqn}|: the nested sum over its index ranges, with `where` read as bounds.

    `where` may be a conjunction of `le(x, y)` between an index and an earlier one (masked
    attention's B ≤ A); anything else returns None.
    """
    names = [f"_{i}" for i in range(eqn.key_arity())]
    dims = list(eqn.target.dims) + ([eqn.reduce] if eqn.reduce else [])
    ext = {"n": P.n, "d": P.d}
    lo = {nm: sympy.Integer(1) for nm in names}
    hi = {nm: ext[d] for nm, d in zip(names, dims)}
    if eqn.where is not None:
        cond = eqn.where(P, *[var(nm) for nm in names])
        parts = cond.args if cond.op == "and" else (cond,)
        for part in parts:
            if part.op != "le" or any(a.op != "var" for a in part.args):
                return None
            x, y = (a.args[0] for a in part.args)
            if names.index(x) > names.index(y) and dims[names.index(x)] == dims[names.index(y)]:
                hi[x] = sympy.Symbol(y, integer=True)       # x ≤ y, y earlier
            elif names.index(y) > names.index(x) and dims[names.index(x)] == dims[names.index(y)]:
                lo[y] = sympy.Symbol(x, integer=True)       # x ≤ y, x earlier
            else:
                return None
    total = sympy.Integer(1)
    for nm in reversed(names):
        total = sympy.summation(total, (sympy.Symbol(nm, integer=True), lo[nm], hi[nm]))
    return sympy.factor(sympy.simplify(total))


def counts(schedule: Schedule) -> Counts:
    """Cycles and ops per kind. A guarded phase's ops are |terms| of its equation, valid only with
    that phase's coverage (a bijection onto the terms) proved: `bijections` lists those phases."""
    per_phase = {p.name: phase_cycles(p) for p in schedule.phases}
    ops: dict = {op.value: sympy.Integer(0) for op in Op}
    bijections: list = []
    per_util: dict = {}
    for p in schedule.phases:
        st = _shape(p)
        kind = st.op.value
        c = phase_ops(p)
        if (c is None and st.op is not Op.MOVE and st.target is not None
                and st.target.array not in schedule.problem.symmetric_pairs):   # not a bijection there
            c = required_count(schedule.problem.equation_for(st.target.array))
            if c is not None:
                bijections.append(p.name)
        if c is not None and per_phase[p.name] != 0:
            per_util[p.name] = sympy.simplify(c / (M * per_phase[p.name]))
        if st.guard is not True and st.send is not None:
            ops["MOVE"] = None                  # forwarding cycles of a guarded phase: enumerated only
        ops[kind] = None if (c is None or ops[kind] is None) else sympy.factor(ops[kind] + c)
    total = sympy.factor(sum(per_phase.values()))
    arith = [ops[k] for k in ("MAC", "EAC", "DIV")]
    util = None if None in arith else sympy.simplify(sum(arith) / (M * total))
    return Counts(total, per_phase, ops, util, tuple(bijections), per_util)


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
