"""Closed-form op and cycle counts (sympy), derived from the loop nests.

A phase takes one cycle per tuple of its sequential loops, so its cycle count is the nested sum of
its loop extents; an unguarded phase does m ops per cycle. Sums are exact symbolic summation of the
bounds the schedule declares (no sampling). Where sympy leaves a sum open, a loop's `through` hint
closes it once `ringproof.proofs.ring.induction` proves it; a guard that bounds a loop index is read as that loop's
bound once proved to lie inside its range. Claims a schedule states (e.g. the paper's op count) are
checked against the derived forms: symbolically, case by case over residues of n, or not at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import sympy

from ringproof.proofs.ring.induction import fold_guard, prove_through
from ringproof.proofs.ring.session import Session
from ringproof.proofs.ring.smt import small_sizes
from ringproof.schedules.dsl import Op, Phase, Schedule, Step
from ringproof.schedules.expr import var
from ringproof.schedules.operators import require_complete
from ringproof.schedules.shape import D_IS_N, Shape, require_parameters

N, M, D = sympy.symbols("n m d", positive=True, integer=True)
_SYMBOLS = {"n": N, "m": M, "k": N / M, "d": D, "kd": D / M}
require_parameters("counting._SYMBOLS", _SYMBOLS)


def symbols(shape: Shape) -> SimpleNamespace:
    """The sympy parameters of counts for `shape` (d is n where d is not a free size)."""
    return shape.record(_SYMBOLS.__getitem__)


SYM = symbols(D_IS_N)


def phase_cycles(phase: Phase, P=SYM, hint: tuple | None = None) -> sympy.Expr:
    """The phase's cycles; `hint` is `prove_through(phase)`'s answer, the hint used if proved."""
    if hint is not None and hint[0] is True:
        lp = phase.loops[0]
        return lp.through(P, lp.bounds(P, SimpleNamespace())[1])     # as written: readable

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
    P = SimpleNamespace(**{name: var(name) for name in ("n", "m", "k", "d", "kd")})
    return phase.step(P, SimpleNamespace(**{name: var(name) for name in phase.index_names}))


def tidy(e: sympy.Expr) -> sympy.Expr:
    """Simplified and factored, except forms with cases (a hint's Piecewise), which sympy's
    simplify takes seconds to rearrange into something no easier to read."""
    return e if e.has(sympy.Piecewise) else sympy.factor(sympy.simplify(e))


def phase_ops(phase: Phase, P=SYM, hint: tuple | None = None, session: Session | None = None,
              shape: Shape = D_IS_N) -> sympy.Expr | None:
    """Ops of a phase: cycles · m, over the loop nest its guard selects (if proved to be one, for
    the `shape` whose sympy record P is); None where a guard needs the coverage bijection."""
    guard = _shape(phase).guard
    if guard is True:
        return sympy.factor(phase_cycles(phase, P, hint) * P.m)
    folded = (fold_guard(phase, guard, session, shape=shape)
              if guard is not False else None)
    if folded is not None:
        return sympy.factor(phase_cycles(folded, P) * P.m)
    return None


@dataclass(frozen=True)
class Counts:
    cycles: sympy.Expr
    phase_cycles: dict
    ops: dict                   # Op name -> closed form (None: not derived)
    utilization: sympy.Expr | None
    bijections: tuple = ()      # phases whose op count rests on their coverage being proved
    phase_utilization: dict = None   # phase -> its ops / (m · its cycles), where derived
    hints: dict = None          # phase -> "" if its `through` hint is proved and used, else why not

    def at(self, n: int, m: int, d: int | None = None) -> dict:
        sub = {N: n, M: m, D: n if d is None else d}
        return {"cycles": int(self.cycles.subs(sub).doit()),
                "ops": {k: (int(v.subs(sub).doit()) if v is not None else None) for k, v in self.ops.items()}}


# A `where` is read as bounds when it is a conjunction of `≤`; every other operator gives None.
require_complete("counting.required_count", ("and", "le"), refused=("eq", "lt", "or", "not", "ite"),
                 sorts=("bool", "any"))


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


def counts(schedule: Schedule, session: Session | None = None) -> Counts:
    """Cycles and ops per kind. A guarded phase's ops are |terms| of its equation, valid only with
    that phase's coverage (a bijection onto the terms) proved: `bijections` lists those phases.
    Counting hints are proved here under the session's budget (None: the shared default), once
    per schedule in a session when they all hold."""
    session = session if session is not None else Session.for_budget()
    hit = session.counted.get(id(schedule))
    if hit is not None and hit[0] is schedule:
        return hit[1]
    c = _derive(schedule, session)
    if not any(c.hints.values()):      # a hint that failed (e.g. timed out) is tried again next time
        session.counted[id(schedule)] = (schedule, c)
    return c


def _derive(schedule: Schedule, session: Session) -> Counts:
    P = symbols(schedule.shape)
    hints = {p.name: prove_through(p, session, shape=schedule.shape) for p in schedule.phases
             if p.loops and p.loops[0].through is not None}
    per_phase = {p.name: phase_cycles(p, P, hint=hints.get(p.name)) for p in schedule.phases}
    ops: dict = {op.value: sympy.Integer(0) for op in Op}
    bijections: list = []
    per_util: dict = {}
    for p in schedule.phases:
        st = _shape(p)
        kind = st.op.value
        c = phase_ops(p, P, hint=hints.get(p.name), session=session, shape=schedule.shape)
        if (c is None and st.op is not Op.MOVE and st.target is not None
                and st.target.array not in schedule.problem.symmetric_pairs):   # not a bijection there
            c = required_count(schedule.problem.equation_for(st.target.array), P)
            if c is not None:
                bijections.append(p.name)
        if c is not None and per_phase[p.name] != 0:
            per_util[p.name] = tidy(c / (M * per_phase[p.name]))
        if st.guard is not True and st.send is not None:
            ops["MOVE"] = None                  # forwarding cycles of a guarded phase: enumerated only
        ops[kind] = None if (c is None or ops[kind] is None) else sympy.factor(ops[kind] + c)
    total = tidy(sum(per_phase.values()))
    arith = [ops[k] for k in ("MAC", "EAC", "DIV")]
    util = None if None in arith else tidy(sum(arith) / (M * total))
    return Counts(total, per_phase, ops, util, tuple(bijections), per_util,
                  {name: ("" if ok is True else why) for name, (ok, why) in hints.items()})


def closed(e: sympy.Expr) -> bool:
    """Is e a closed form? (A sum sympy could not evaluate stays a `Sum`.)"""
    return not e.has(sympy.Sum)


def claim_at(claim: str, n: int, m: int, d: int | None = None) -> int:
    """The value of a claimed closed form at (n, m, d); d = n where not given."""
    return int(sympy.sympify(claim, locals={"n": N, "m": M, "d": D}).subs({N: n, M: m, D: n if d is None else d}))


def _divisors(e: sympy.Expr, x: sympy.Symbol) -> set[int]:
    """Constant c of every `x mod c` and `floor(x·a/c)` in e (a, c integers)."""
    out = {int(a.args[1]) for a in e.atoms(sympy.Mod)
           if a.args[0] == x and a.args[1].is_Integer}
    for f in e.atoms(sympy.floor):
        num, den = sympy.fraction(sympy.together(f.args[0]))
        if den.is_Integer and num.free_symbols == {x} and num.is_polynomial(x):
            out.add(int(den))
    return out


def equal(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Is a = b for all positive integers n, m? True only when sympy shows a − b = 0, directly or
    in each residue class n = c·ν + s (c the lcm of the constant divisors of n in a − b, same for
    m), where floor and mod of n by c become polynomials; False means not shown."""
    d = a - b
    if sympy.simplify(d) == 0:
        return True
    cases = residue_cases(d)
    return cases != [{}] and all(sympy.simplify(d.subs(case)) == 0 for case in cases)


def residue_cases(e: sympy.Expr) -> list[dict]:
    """The substitutions x = c·ν + s (x in n, m, d; c the lcm of the constant divisors of x in e,
    s < c) under which floor and mod of x by c become polynomials; [{}] when e has none."""
    split = {x: math.lcm(*_divisors(e, x)) for x in (N, M, D) if _divisors(e, x)}
    digits = {x: sympy.Symbol(f"_{x}", integer=True, nonnegative=True) for x in split}
    cases = [{}]
    for x, c in split.items():
        cases = [{**case, x: c * digits[x] + s} for case in cases for s in range(c)]
    return cases


def per_residue(e: sympy.Expr) -> list[tuple[str, sympy.Expr]]:
    """e in each residue class of n and m (label, closed form in n, m), or [("", e)]."""
    out = []
    for case in residue_cases(e):
        if not case:
            return [("", e)]
        label, back = [], {}
        for x, form in case.items():
            nu = next(iter(form.free_symbols))
            c, s = int(form.coeff(nu)), int(form.subs(nu, 0))
            label.append(f"{x} ≡ {s} (mod {c})")
            back[nu] = (x - s) / c
        out.append((", ".join(label), sympy.simplify(sympy.factor(e.subs(case).subs(back)))))
    return out


def check_claim(derived: sympy.Expr, claim: str, max_n: int = 24, shape: Shape = D_IS_N, derived_params=None):
    """None if `claim` is shown equal to `derived` for all n, m (and d; `equal`); else the smallest
    (n, m, d, derived, claimed) where they differ, or (None, None, None, derived, claimed) when no
    size up to max_n tells them apart (agreement on samples, not a proof). `shape`: the free sizes
    (and the side condition: only the sizes it allows are compared); `derived_params`: {name:
    sympy value} of the schedule's derived parameters, which the claim may name."""
    c = sympy.sympify(claim, locals={"n": N, "m": M, "d": symbols(shape).d, **(derived_params or {})})
    if closed(derived) and equal(derived, c):
        return None
    for n, d, m in small_sizes(shape, max_n // len(shape.free)):    # max_n shared by the free sizes
        sub = {N: n, M: m, D: d}
        got, want = derived.subs(sub).doit(), c.subs(sub)
        if got != want:
            return n, m, d, got, want
    return (None, None, None, derived, c)


def derived_parameters(schedule, max_n: int = 24) -> dict:
    """{name: sympy value} of the schedule's derived parameters; a floor division is taken as the
    exact quotient where it is exact at every size up to max_n the side condition allows."""
    from ringproof.schedules.dsl import with_derived
    P = with_derived(schedule.derived, symbols(schedule.shape))
    out = {}
    for name in schedule.derived:
        value = sympy.sympify(getattr(P, name))
        exact = value.replace(sympy.floor, lambda x: x)
        sizes = small_sizes(schedule.shape, max_n)             # the sizes the side condition allows
        same = all(value.subs({N: n, M: m, D: d}) == exact.subs({N: n, M: m, D: d}) for n, d, m in sizes)
        out[name] = exact if same else value
    return out