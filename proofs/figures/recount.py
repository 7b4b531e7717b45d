"""A phase's terms on PE l counted through a counting hint (`dsl.Recount`), for the balance.

Where a phase's inverse chooses the PE of a term by cases (an `ite`: Algorithm 3's phase 2 shifts
its short rows, 2A < n), the counter cannot count |{terms t : inverse(t).l = l}| directly. The hint
names a nest of its own, a guard and a PE there, and maps `to` and `back` between the terms and its
points. Two checks (Z3, for every n, under the schedule's side condition; `smt.discharge`) make
|{points u : guard(u), pe(u) = l}| that count at every l:

- *to*: every term t (within its extents, where the equation's mask holds) maps to a point of the
  nest where the guard holds, back(to(t)) = t, and pe(to(t)) = inverse(t).l;
- *back*: every point u of the nest where the guard holds maps to a term t = back(u) (within its
  extents, where the mask holds) with to(t) = u.

So `to` is a bijection from the terms onto the guarded points, and it keeps the PE: the terms on
PE l and the points with pe = l are as many. The points are then counted by `nests.count` (indices
read mod m split in radix m). The count still rests on the phase's coverage, as every count over
the terms does, and it is compared with the trace at every n ≤ 12 (`spread._check`).
"""

from __future__ import annotations

from types import SimpleNamespace

import sympy

from ringproof.proofs.ring.properties.base import Check, extent
from ringproof.schedules.dsl import with_derived
from ringproof.schedules.expr import and_, between, eq, evaluate, lift, var


def checks(schedule, phase) -> dict:
    """{"to": Check, "back": Check}: the two checks of `phase`'s hint (module doc)."""
    from ringproof.proofs.ring.iterations import new_var
    from ringproof.proofs.ring.normalize import PARAMS
    from ringproof.proofs.ring.properties import shape_of
    from ringproof.proofs.ring.properties.coverage import required_term
    hint, eqn, dims = phase.recount, *_equation(schedule, phase)
    requires, chunk, _ = shape_of(schedule)
    P = with_derived(schedule.derived, PARAMS) if schedule.derived else PARAMS
    _arity(phase, len(dims))

    def within(t):
        return and_(*[between(1, x, extent(d)) for x, d in zip(t, dims)],
                    *([lift(eqn.where(P, *t))] if eqn.where else []))

    def in_nest(u):
        out, ix = [], {}
        for lp, x in zip(hint.loops, u):
            lo, hi = lp.bounds(P, SimpleNamespace(**ix))
            out.append(between(lo, x, hi))
            ix[lp.name] = x
        return and_(*out)

    def to(ctx):
        key, hyp = required_term(ctx, eqn, False)
        u = tuple(hint.to(P, tuple(key)))
        back = tuple(hint.back(P, u))
        pe = phase.inverse(P, tuple(key))["l"]
        return {}, hyp, and_(in_nest(u), lift(hint.guard(P, u)), *[eq(b, x) for b, x in zip(back, key)],
                             eq(hint.pe(P, u), pe))

    def back(ctx):
        ix = {}
        for lp in hint.loops:
            lo, hi = lp.bounds(P, SimpleNamespace(**ix))
            new_var(ctx, f"u.{lp.name}", lo, hi)
            ix[lp.name] = var(f"u.{lp.name}")
        u = tuple(ix.values())
        t = tuple(hint.back(P, u))
        again = tuple(hint.to(P, t))
        return {}, [lift(hint.guard(P, u))], and_(within(t), *[eq(a, x) for a, x in zip(again, u)])

    return {part: Check("balance", phase.name, f"counting hint {part}", build, shape=schedule.shape,
                        requires=requires, chunk=chunk) for part, build in (("to", to), ("back", back))}


def pending(schedule) -> dict:
    """{session key: its `checks`}: the checks of the schedule's counting hints, one set per key
    of `proved` (phases 2a and 2b of Algorithm 3 share one), for a pool to discharge beside the
    balance (`prover._solve`), which counts with them assumed (`assume`) until `join`."""
    out: dict = {}
    for phase in schedule.phases:
        if phase.recount is not None and phase.inverse is not None:
            key = _key(schedule, phase)
            if key not in out:
                out[key] = checks(schedule, phase)
    return out


def assume(schedule, session, todo: dict) -> None:
    """The hints of `todo` (`pending`) taken as proved in `session` until `join` settles them."""
    for key in todo:
        session.balanced[key] = (schedule, "")


def join(schedule, session, todo: dict, outcomes: dict) -> bool:
    """Each hint of `todo` settled in `session` by its checks' `outcomes` ({(session key, part):
    `smt.Outcome`}), as `proved` would have; False where one is not proved: then the balance
    counted with it assumed is dropped from the session (its forms, the counts through the hints),
    to be found again without it."""
    ok = True
    for key, cs in todo.items():
        why, definite = _verdict((part, outcomes[key, part]) for part in cs)
        ok = ok and why == ""
        if definite:
            session.balanced[key] = (schedule, why)
        else:
            session.balanced.pop(key, None)
    if not ok:
        for key in [k for k in session.balanced if k == id(schedule) or
                    isinstance(k, tuple) and k[:2] == ("recounted", id(schedule))]:
            del session.balanced[key]
    return ok


def proved(schedule, phase, session) -> str:
    """"" where both checks of the hint are proved, else why not. Kept in the session (where
    definite) for what the checks read (the hint, the inverse's PE, the equation's extents and
    mask, the side condition): phase 2b of Algorithm 3 carries phase 2a's hint over terms alike."""
    from ringproof.proofs.ring.smt import discharge
    key = _key(schedule, phase)
    hit = session.balanced.get(key)
    if hit is not None and hit[0] is schedule:
        return hit[1]
    why, definite = _verdict((part, discharge(c, session)) for part, c in checks(schedule, phase).items())
    if definite:                    # a solver's unknown is not kept: another budget may settle it
        session.balanced[key] = (schedule, why)
    return why


def _key(schedule, phase) -> tuple:
    return ("recount", id(schedule), id(phase.recount), _read(schedule, phase))


def _verdict(outcomes) -> tuple:
    """(why not proved, "" where every check is; whether that answer is definite) from the
    (part, outcome) of the hint's checks, taken in order up to the first not proved."""
    from ringproof.proofs.results import Verdict
    why, definite = "", True
    for name, got in outcomes:
        if got.verdict is Verdict.REFUTED:
            why = f"its counting hint's check '{name}' is refuted at n={got.n}, m={got.m}"
        elif got.verdict is not Verdict.PROVED:
            why, definite = f"its counting hint's check '{name}' is {got.verdict.value} ({got.reason})", False
        elif got.cross and got.cross["answer"] != "unsat":       # as the prover reads a second solver
            why = f"its counting hint's check '{name}': z3 unsat, {got.cross['solver']} {got.cross['answer']}"
        if why:
            break
    return why, definite


def nest(schedule, phase, P, L):
    """([(l, 1, m), (u1, lo1, hi1), ...], guard ∧ pe(u) = l) of the hint in sympy (P: the counter's
    parameters)."""
    hint = phase.recount
    T = SimpleNamespace(**{name: var(name) for name in vars(P)})
    T = with_derived(schedule.derived, T) if schedule.derived else T
    syms = [sympy.Symbol(f"u_{lp.name}", integer=True) for lp in hint.loops]
    env = {**vars(P), **{str(x): x for x in syms}}
    loops, ix = [(L, sympy.Integer(1), sympy.sympify(P.m))], {}
    for lp, x in zip(hint.loops, syms):
        lo, hi = lp.bounds(T, SimpleNamespace(**ix))
        loops.append((x, sympy.sympify(evaluate(lift(lo), env)), sympy.sympify(evaluate(lift(hi), env))))
        ix[lp.name] = var(str(x))
    u = tuple(var(str(x)) for x in syms)
    cond = and_(lift(hint.guard(T, u)), eq(hint.pe(T, u), var("l")))
    return loops, sympy.sympify(evaluate(lift(cond), {**env, "l": L}))


def _read(schedule, phase) -> str:
    """What the hint's checks read of the phase, as text: the inverse's PE of a term, the
    equation's extents and mask."""
    from ringproof.proofs.ring.normalize import PARAMS
    P = with_derived(schedule.derived, PARAMS) if schedule.derived else PARAMS
    eqn, dims = _equation(schedule, phase)
    key = tuple(var(f"key.{i}") for i in range(len(dims)))
    where = lift(eqn.where(P, *key)) if eqn.where else None
    return f"{lift(phase.inverse(P, key)['l'])} | {dims} | {where}"


def _equation(schedule, phase):
    """(the equation whose terms the phase covers, its term's dimensions)."""
    from ringproof.proofs.figures.counting import symbolic_step
    eqn = schedule.problem.equation_for(symbolic_step(phase).target.array)
    return eqn, list(eqn.target.dims) + ([eqn.reduce] if eqn.reduce else [])


def _arity(phase, terms: int) -> None:
    """BadInput unless `to` gives a point of the hint's nest and `back` a term (tuples of those
    lengths): a shorter tuple would leave an index unchecked."""
    from ringproof.errors import BadInput
    from ringproof.proofs.ring.normalize import PARAMS
    hint = phase.recount
    u = tuple(hint.to(PARAMS, tuple(var(f"t{i}") for i in range(terms))))
    t = tuple(hint.back(PARAMS, tuple(var(lp.name) for lp in hint.loops)))
    if len(u) != len(hint.loops) or len(t) != terms:
        raise BadInput(f"phase {phase.name}: its counting hint maps a term to {len(u)} indices (its nest has "
                       f"{len(hint.loops)}) and a point to {len(t)} (a term has {terms})")
