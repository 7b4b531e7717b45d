"""The obligations of a schedule, derived generically from its definition (design.md §2).

Each `Check` is one query: `build(ctx)` creates symbolic iterations (their domains join the
assumptions) and returns extra hypotheses and the goal; the goal holds for every (n, m) of the tier
iff assumptions ∧ hypotheses ∧ ¬goal is unsatisfiable. Nothing here is specific to an algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import z3

from proofs.iterations import (It, alternatives, at, before, fresh, in_domain, moves, new_var,
                               next_pe, ref_eq, same_iteration, sends)
from proofs.normalize import PARAMS, Ctx, NormalizationError
from schedules.dsl import HOME, Op, Phase, Ref, Schedule
from schedules.errors import BadInput
from schedules.expr import and_, between, eq, lift, not_, or_, var


@dataclass(frozen=True)
class Check:
    property: str
    phase: str
    name: str
    build: Callable[[Ctx], tuple]   # ctx -> (iterations {prefix: It}, hypotheses [Term], goal Term)


def _implies(a, b):
    return or_(not_(a), b)


def in_range(ref: Ref | None):
    if ref is None:
        return lift(True)
    ext = {"n": PARAMS.n, "d": PARAMS.d}
    return and_(*[between(1, x, ext[d]) for x, d in zip(ref.idx, ref.array.dims)])


def derive(schedule: Schedule) -> list[Check]:
    """Every check of every property for every phase of `schedule`."""
    _validate(schedule)
    checks: list[Check] = []
    for phase in schedule.phases:
        checks += _well_formed(schedule, phase)
        checks += _coverage(schedule, phase)
        checks += _no_conflict(schedule, phase)
        checks += _accumulation(schedule, phase)
        checks += _sources(schedule, phase)
    checks += _uncomputed(schedule)
    return checks


def _validate(schedule: Schedule) -> None:
    """Structural checks that need no solver: a malformed schedule is bad input, not a verdict."""
    from types import SimpleNamespace

    for phase in schedule.phases:
        ix = SimpleNamespace(**{name: var(name) for name in phase.index_names})
        st = phase.step(PARAMS, ix)
        if len(st.sources) != len(st.operands):
            raise BadInput(f"phase {phase.name}: {len(st.operands)} operands but "
                           f"{len(st.sources)} source witnesses")
        if st.op.accumulates and (st.first is None or st.prev is None):
            raise BadInput(f"phase {phase.name}: an accumulating step must give `first` and `prev`")
        if st.op is not Op.MOVE and st.target is None:
            raise BadInput(f"phase {phase.name}: a {st.op.value} step needs a target")


def _phases_computing(schedule: Schedule, array) -> list[Phase]:
    from types import SimpleNamespace

    out = []
    for p in schedule.phases:
        st = p.step(PARAMS, SimpleNamespace(**{name: var(name) for name in p.index_names}))
        if st.target is not None and st.target.array == array and st.op is not Op.MOVE:
            out.append(p)
    return out


# ----------------------------------------------------------------------------------- well-formed


def _well_formed(S: Schedule, P: Phase) -> list[Check]:
    def build(ctx):
        a = fresh(ctx, S, P, "a")
        st = a.step
        conds = [between(1, st.pe, PARAMS.m), in_range(st.target)]
        conds += [in_range(o) for o in st.operands]
        if st.send is not None:
            conds.append(_implies(lift(st.send.when),
                                  and_(in_range(st.send.datum), in_range(st.send.stored))))
        return {"a": a}, [], and_(*conds)

    return [Check("well-formed", P.name, "PE and indices in range", build)]


# ----------------------------------------------------------------------------------- coverage


def _key(eqn, st):
    key = list(st.target.idx)
    if eqn.reduce:
        o, pos = eqn.reduce_at
        key.append(st.operands[o].idx[pos])
    return key


def _coverage(S: Schedule, P: Phase) -> list[Check]:
    from types import SimpleNamespace

    st0 = P.step(PARAMS, SimpleNamespace(**{name: var(name) for name in P.index_names}))
    if st0.op is Op.MOVE:
        return []
    eqn = S.problem.equation_for(st0.target.array)
    if len(_phases_computing(S, eqn.target)) > 1:
        def several(ctx):
            raise NormalizationError(f"{eqn.target.name} is computed by several phases; "
                                     "coverage across phases needs a joint inverse")
        return [Check("coverage", P.name, "one phase per array", several)]
    ext = {"n": PARAMS.n, "d": PARAMS.d}

    def terms(ctx):
        a = fresh(ctx, S, P, "a")
        st = a.step
        if st.op is not eqn.op or len(st.operands) != len(eqn.operands(PARAMS, *_key(eqn, st))):
            return {"a": a}, [], lift(False)
        key = _key(eqn, st)
        want = eqn.operands(PARAMS, *key)
        goal = [ref_eq(x, y) for x, y in zip(st.operands, want)]
        if eqn.reduce:
            goal.append(between(1, key[-1], ext[eqn.reduce]))
        if eqn.where:
            goal.append(lift(eqn.where(PARAMS, *key)))
        return {"a": a}, [], and_(*goal)

    def injective(ctx):
        a, b = fresh(ctx, S, P, "a"), fresh(ctx, S, P, "b")
        ka, kb = _key(eqn, a.step), _key(eqn, b.step)
        hyp = [not_(same_iteration(a, b))] + [eq(x, y) for x, y in zip(ka, kb)]
        return {"a": a, "b": b}, hyp, lift(False)

    def onto(ctx):
        dims = list(eqn.target.dims) + ([eqn.reduce] if eqn.reduce else [])
        names = [f"key.{i}" for i in range(len(dims))]
        for name, d in zip(names, dims):
            new_var(ctx, name, 1, ext[d])
        key = [var(nm) for nm in names]
        hyp = [lift(eqn.where(PARAMS, *key))] if eqn.where else []
        if P.inverse is None:
            raise BadInput(f"phase {P.name}: coverage needs an `inverse` witness")
        inv = P.inverse(PARAMS, tuple(key))
        it = It(P, S.phases.index(P), {k: lift(inv[k]) for k in P.index_names})
        goal = and_(in_domain(it), *[eq(x, y) for x, y in zip(_key(eqn, it.step), key)])
        return {"key": key, "inv": it}, hyp, goal

    return [Check("coverage", P.name, f"each term is one of {eqn.target.name}'s", terms),
            Check("coverage", P.name, "no term done twice (injective)", injective),
            Check("coverage", P.name, "every term done (inverse witness)", onto)]


def _uncomputed(S: Schedule) -> list[Check]:
    out = []
    for eqn in S.problem.equations:
        if not _phases_computing(S, eqn.target):
            out.append(Check("coverage", "-", f"nothing computes {eqn.target.name}",
                             lambda ctx: ({}, [], lift(False))))
    return out


# ----------------------------------------------------------------------------------- no-conflict


def _no_conflict(S: Schedule, P: Phase) -> list[Check]:
    def build(ctx):
        a = fresh(ctx, S, P, "a")
        b = fresh(ctx, S, P, "b", share=a)
        hyp = [not_(eq(a.idx["l"], b.idx["l"]))]
        goal = and_(not_(eq(a.step.pe, b.step.pe)), not_(ref_eq(a.step.target, b.step.target)))
        return {"a": a, "b": b}, hyp, goal

    return [Check("no-conflict", P.name, "one op per PE per cycle, no write clash", build)]


# ----------------------------------------------------------------------------------- accumulators


def _accumulation(S: Schedule, P: Phase) -> list[Check]:
    from types import SimpleNamespace

    st0 = P.step(PARAMS, SimpleNamespace(**{name: var(name) for name in P.index_names}))
    if not st0.op.accumulates:
        return []

    def prev_ok(ctx):
        a = fresh(ctx, S, P, "a")
        src = at(S, a.step.prev)
        ps, pa = src.step.pe, a.step.pe
        goal = and_(in_domain(src), ref_eq(src.step.target, a.step.target), before(src, a),
                    or_(and_(eq(ps, pa), not_(moves(src))), and_(eq(next_pe(ps), pa), moves(src))))
        return {"a": a, "prev": src}, [not_(lift(a.step.first))], goal

    checks = [Check("ring-locality", P.name, "prev witness: the partial sum is here", prev_ok)]
    for Q in _phases_computing(S, st0.target.array):
        def first_unique(ctx, Q=Q):
            a, b = fresh(ctx, S, P, "a"), fresh(ctx, S, Q, "b")
            hyp = [not_(same_iteration(a, b)), lift(a.step.first), lift(b.step.first),
                   ref_eq(a.step.target, b.step.target)]
            return {"a": a, "b": b}, hyp, lift(False)

        def prev_injective(ctx, Q=Q):
            a, b = fresh(ctx, S, P, "a"), fresh(ctx, S, Q, "b")
            hyp = [not_(same_iteration(a, b)), not_(lift(a.step.first)), not_(lift(b.step.first)),
                   same_iteration(at(S, a.step.prev), at(S, b.step.prev))]
            return {"a": a, "b": b}, hyp, lift(False)

        checks += [Check("ring-locality", P.name, f"one first term per sum (with {Q.name})", first_unique),
                   Check("ring-locality", P.name, f"partial sums never fork (with {Q.name})", prev_injective)]
    return checks


# ----------------------------------------------------------------------------------- operands


def _holds(src: It, datum):
    """Term: src has `datum` at its PE in its cycle (reads it, or produced its final value)."""
    st = src.step
    return or_(*[ref_eq(u, datum) for u in st.operands], ref_eq(st.target, datum))


def _sources(S: Schedule, P: Phase) -> list[Check]:
    from types import SimpleNamespace

    st0 = P.step(PARAMS, SimpleNamespace(**{name: var(name) for name in P.index_names}))
    checks = []
    for oi in range(len(st0.operands)):
        for ai, (cond0, w0) in enumerate(alternatives(st0.sources[oi])):
            local = w0 is HOME or w0.phase == P.name
            prop = "ring-locality" if local else "data-flow"
            where = "home" if w0 is HOME else w0.phase

            def build(ctx, oi=oi, ai=ai):
                a = fresh(ctx, S, P, "a")
                cond, w = alternatives(a.step.sources[oi])[ai]
                o = a.step.operands[oi]
                if w is HOME:
                    ok = eq(S.home(PARAMS, o), a.step.pe) if o.array.is_input else lift(False)
                    return {"a": a}, [cond], ok
                src = at(S, w)
                ss = src.step
                held = and_(eq(ss.pe, a.step.pe), _holds(src, o),
                            not_(and_(moves(src), ref_eq(ss.target, o))))
                sent = lift(False) if ss.send is None else and_(
                    eq(next_pe(ss.pe), a.step.pe), sends(src), ref_eq(ss.send.stored, o),
                    _holds(src, ss.send.datum))
                goal = and_(in_domain(src), before(src, a), or_(held, sent))
                return {"a": a, "src": src}, [cond], goal

            checks.append(Check(prop, P.name, f"operand {oi + 1} from {where}", build))
            if w0 is HOME:
                continue
            src_phase = S.phase(w0.phase)
            src_st = src_phase.step(PARAMS, SimpleNamespace(
                **{name: var(name) for name in src_phase.index_names}))
            if not (src_st.op.accumulates and src_st.target.array == st0.operands[oi].array):
                continue
            for Q in _phases_computing(S, src_st.target.array):
                def final(ctx, oi=oi, ai=ai, Q=Q):
                    a = fresh(ctx, S, P, "a")
                    cond, w = alternatives(a.step.sources[oi])[ai]
                    src = at(S, w)
                    c = fresh(ctx, S, Q, "c")
                    hyp = [cond, ref_eq(src.step.target, a.step.operands[oi]),
                           not_(lift(c.step.first)), same_iteration(at(S, c.step.prev), src)]
                    return {"a": a, "src": src, "c": c}, hyp, lift(False)

                checks.append(Check(prop, P.name, f"operand {oi + 1} is final (no later term in {Q.name})",
                                    final))
    return checks
