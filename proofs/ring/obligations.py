"""The obligations of a schedule, derived generically from its definition (design.md §2).

Each `Check` is one query: `build(ctx)` creates symbolic iterations (their loop ranges join the
assumptions) and returns hypotheses and the goal; the goal holds for every (n, m) of the tier iff
assumptions ∧ hypotheses ∧ ¬goal is unsatisfiable. Nothing here is specific to an algorithm.

Vocabulary (proofs/iterations.py): an iteration is *active* when its guard holds (its op happens),
*busy* when active or sending, a *node* of its running sum when it adds a term or forwards the
partial sum, and it *starts* the sum when active and `first`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Callable

from ringproof.proofs.ring.iterations import (It, active, alternatives, at, before, busy, exists, fresh, moves,
                               new_var, next_pe, node, ref_eq, same_iteration, sending, starts)
from ringproof.proofs.ring.normalize import PARAMS, Ctx, NormalizationError
from ringproof.schedules.dsl import HOME, Op, Phase, Ref, Schedule
from ringproof.errors import BadInput
from ringproof.schedules.expr import and_, between, eq, le, lift, not_, or_, var


@dataclass(frozen=True)
class Check:
    property: str
    phase: str
    name: str
    build: Callable[[Ctx], tuple]   # ctx -> (iterations {role: It}, hypotheses [Term], goal Term)
    square: bool = True             # d = n (the schedule's shape; False: d is its own parameter)


def _implies(a, b):
    return or_(not_(a), b)


def in_range(ref: Ref | None):
    if ref is None:
        return lift(True)
    ext = {"n": PARAMS.n, "d": PARAMS.d}
    return and_(*[between(1, x, ext[d]) for x, d in zip(ref.idx, ref.array.dims)])


def _generic_step(phase: Phase):
    return phase.step(PARAMS, SimpleNamespace(**{name: var(name) for name in phase.index_names}))


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
    return [replace(c, square=schedule.square) for c in checks]


def _validate(schedule: Schedule) -> None:
    """Structural checks that need no solver: a malformed schedule is bad input, not a verdict."""
    for phase in schedule.phases:
        st = _generic_step(phase)
        if len(st.sources) != len(st.operands):
            raise BadInput(f"phase {phase.name}: {len(st.operands)} operands but "
                           f"{len(st.sources)} source witnesses")
        if st.op.accumulates and (st.first is None or st.prev is None):
            raise BadInput(f"phase {phase.name}: an accumulating step must give `first` and `prev`")
        if st.op is not Op.MOVE and st.target is None:
            raise BadInput(f"phase {phase.name}: a {st.op.value} step needs a target")


def _phases_computing(schedule: Schedule, array) -> list[Phase]:
    out = []
    for p in schedule.phases:
        st = _generic_step(p)
        if st.target is not None and st.target.array == array and st.op is not Op.MOVE:
            out.append(p)
    return out


# ----------------------------------------------------------------------------------- well-formed


def _transpose(ref: Ref) -> Ref:
    return ref.array[tuple(reversed(ref.idx))]


def _well_formed(S: Schedule, P: Phase) -> list[Check]:
    def build(ctx):
        a = fresh(ctx, S, P, "a")
        st = a.step
        conds = [between(1, st.pe, PARAMS.m),
                 _implies(active(a), and_(in_range(st.target), *[in_range(o) for o in st.operands]))]
        if st.send is not None:
            d, as_ = st.send.datum, st.send.stored
            legal = ref_eq(as_, d)
            if d.array in S.problem.symmetric_pairs and len(d.idx) == 2:
                legal = or_(legal, ref_eq(as_, _transpose(d)))
            conds.append(_implies(sending(a), and_(in_range(d), in_range(as_), legal)))
        return {"a": a}, [busy(a)], and_(*conds)

    return [Check("well-formed", P.name, "PE and indices in range, renames legal", build)]


# ----------------------------------------------------------------------------------- coverage


def _key(eqn, st):
    key = list(st.target.idx)
    if eqn.reduce:
        o, pos = eqn.reduce_at
        key.append(st.operands[o].idx[pos])
    return key


def _coverage(S: Schedule, P: Phase) -> list[Check]:
    st0 = _generic_step(P)
    if st0.op is Op.MOVE:
        return []
    eqn = S.problem.equation_for(st0.target.array)
    if len(_phases_computing(S, eqn.target)) > 1:
        def several(ctx):
            raise NormalizationError(f"{eqn.target.name} is computed by several phases; "
                                     "coverage across phases needs a joint inverse")
        return [Check("coverage", P.name, "one phase per array", several)]
    ext = {"n": PARAMS.n, "d": PARAMS.d}
    symmetric = eqn.target in S.problem.symmetric_pairs

    def terms(ctx):
        a = fresh(ctx, S, P, "a")
        st = a.step
        key = _key(eqn, st)
        want = eqn.operands(PARAMS, *key)
        if st.op is not eqn.op or len(st.operands) != len(want):
            return {"a": a}, [active(a)], lift(False)
        goal = [ref_eq(x, y) for x, y in zip(st.operands, want)]
        if eqn.reduce:
            goal.append(between(1, key[-1], ext[eqn.reduce]))
        if eqn.where:
            goal.append(lift(eqn.where(PARAMS, *key)))
        return {"a": a}, [active(a)], and_(*goal)

    def injective(ctx):
        a, b = fresh(ctx, S, P, "a"), fresh(ctx, S, P, "b")
        ka, kb = _key(eqn, a.step), _key(eqn, b.step)
        hyp = [active(a), active(b), not_(same_iteration(a, b))] + [eq(x, y) for x, y in zip(ka, kb)]
        return {"a": a, "b": b}, hyp, lift(False)

    def onto(ctx):
        dims = list(eqn.target.dims) + ([eqn.reduce] if eqn.reduce else [])
        names = [f"key.{i}" for i in range(len(dims))]
        for name, d in zip(names, dims):
            new_var(ctx, name, 1, ext[d])
        key = [var(nm) for nm in names]
        hyp = [lift(eqn.where(PARAMS, *key))] if eqn.where else []
        if symmetric:       # one orientation of each pair is required
            hyp.append(lift(le(key[1], key[0])))
        if P.inverse is None:
            raise BadInput(f"phase {P.name}: coverage needs an `inverse` witness")
        inv = P.inverse(PARAMS, tuple(key))
        it = It(P, S.phases.index(P), {k: lift(inv[k]) for k in P.index_names})
        got = _key(eqn, it.step)
        match = and_(*[eq(x, y) for x, y in zip(got, key)])
        if symmetric:
            swapped = [key[1], key[0]] + key[2:]
            match = or_(match, and_(*[eq(x, y) for x, y in zip(got, swapped)]))
        return {"key": key, "inv": it}, hyp, and_(exists(it), active(it), match)

    what = "in one orientation " if symmetric else ""
    return [Check("coverage", P.name, f"each term is one of {eqn.target.name}'s", terms),
            Check("coverage", P.name, "no term done twice (injective)", injective),
            Check("coverage", P.name, f"every term done {what}(inverse witness)", onto)]


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
        hyp = [busy(a), busy(b), not_(eq(a.idx["l"], b.idx["l"]))]
        goal = and_(not_(eq(a.step.pe, b.step.pe)),
                    _implies(and_(active(a), active(b), in_range(a.step.target)),   # else: well-formed
                             not_(ref_eq(a.step.target, b.step.target))))
        return {"a": a, "b": b}, hyp, goal

    return [Check("no-conflict", P.name, "one op per PE per cycle, no write clash", build)]


# ----------------------------------------------------------------------------------- running sums


def _accumulation(S: Schedule, P: Phase) -> list[Check]:
    st0 = _generic_step(P)
    if not st0.op.accumulates:
        return []

    def prev_ok(ctx):
        a = fresh(ctx, S, P, "a")
        src = at(S, a.step.prev)
        ps, pa = src.step.pe, a.step.pe
        goal = and_(exists(src), node(src), ref_eq(src.step.target, a.step.target), before(src, a),
                    or_(and_(eq(ps, pa), not_(moves(src))), and_(eq(next_pe(ps), pa), moves(src))))
        return {"a": a, "prev": src}, [node(a), not_(starts(a))], goal

    checks = [Check("ring-locality", P.name, "prev witness: the partial sum is here", prev_ok)]
    for Q in _phases_computing(S, st0.target.array):
        def first_unique(ctx, Q=Q):
            a, b = fresh(ctx, S, P, "a"), fresh(ctx, S, Q, "b")
            hyp = [starts(a), starts(b), not_(same_iteration(a, b)),
                   ref_eq(a.step.target, b.step.target)]
            return {"a": a, "b": b}, hyp, lift(False)

        def prev_injective(ctx, Q=Q):
            a, b = fresh(ctx, S, P, "a"), fresh(ctx, S, Q, "b")
            hyp = [node(a), node(b), not_(starts(a)), not_(starts(b)), not_(same_iteration(a, b)),
                   same_iteration(at(S, a.step.prev), at(S, b.step.prev))]
            return {"a": a, "b": b}, hyp, lift(False)

        checks += [Check("ring-locality", P.name, f"one first term per sum (with {Q.name})", first_unique),
                   Check("ring-locality", P.name, f"partial sums never fork (with {Q.name})", prev_injective)]
    return checks


# ----------------------------------------------------------------------------------- operands


def _holds(src: It, datum):
    """Term: src has `datum` on its PE in its cycle: reads it, touches it as its sum, or forwards
    it with a checked send source."""
    st = src.step
    h = [and_(active(src), ref_eq(u, datum)) for u in st.operands]
    h.append(and_(node(src) if st.op.accumulates else active(src), ref_eq(st.target, datum)))
    if st.send is not None and st.send.source is not None:
        h.append(and_(sending(src), not_(moves(src)), ref_eq(st.send.datum, datum)))
    return or_(*h)


def _valid_source(S, a: It, w, o):
    """Term: witness w shows datum o on a's PE at the start of a's cycle."""
    if w is HOME:
        if not o.array.is_input:
            return lift(False), None
        return and_(in_range(o), eq(S.home(PARAMS, o), a.step.pe)), None
    src = at(S, w)
    ss = src.step
    held = and_(eq(ss.pe, a.step.pe), _holds(src, o), not_(and_(moves(src), ref_eq(ss.target, o))))
    sent = lift(False) if ss.send is None else and_(
        eq(next_pe(ss.pe), a.step.pe), sending(src), ref_eq(ss.send.stored, o),
        _holds(src, ss.send.datum))
    return and_(exists(src), before(src, a), or_(held, sent)), src


def _read_sites(st):
    """(label, ref, witness, needs) for each datum a step must find: operands, and a forwarded datum."""
    sites = [(f"operand {i + 1}", o, w, "operand") for i, (o, w) in enumerate(zip(st.operands, st.sources))]
    if st.send is not None and st.send.source is not None:
        sites.append(("sent datum", st.send.datum, st.send.source, "send"))
    return sites


def _site_hyp(a: It, kind: str):
    st = a.step
    if kind == "operand":
        return active(a)
    own = [ref_eq(u, st.send.datum) for u in st.operands] + [ref_eq(st.target, st.send.datum)]
    return and_(sending(a), not_(moves(a)), not_(and_(active(a), or_(*own))))


def _sources(S: Schedule, P: Phase) -> list[Check]:
    st0 = _generic_step(P)
    checks = []
    for si, (label, ref0, w0_all, kind) in enumerate(_read_sites(st0)):
        for ai, (cond0, w0) in enumerate(alternatives(w0_all)):
            local = w0 is HOME or w0.phase == P.name
            prop = "ring-locality" if local else "data-flow"
            where = "home" if w0 is HOME else w0.phase

            def build(ctx, si=si, ai=ai):
                a = fresh(ctx, S, P, "a")
                label, o, w_all, kind = _read_sites(a.step)[si]
                cond, w = alternatives(w_all)[ai]
                goal, src = _valid_source(S, a, w, o)
                its = {"a": a} if src is None else {"a": a, "src": src}
                return its, [_site_hyp(a, kind), cond], goal

            checks.append(Check(prop, P.name, f"{label} from {where}", build))
            if w0 is HOME:
                continue
            src_st = _generic_step(S.phase(w0.phase))
            if not (src_st.op.accumulates and src_st.target.array == ref0.array):
                continue
            for Q in _phases_computing(S, src_st.target.array):
                def final(ctx, si=si, ai=ai, Q=Q):
                    a = fresh(ctx, S, P, "a")
                    label, o, w_all, kind = _read_sites(a.step)[si]
                    cond, w = alternatives(w_all)[ai]
                    src = at(S, w)
                    c = fresh(ctx, S, Q, "c")
                    hyp = [_site_hyp(a, kind), cond, ref_eq(src.step.target, o), node(c),
                           not_(starts(c)), same_iteration(at(S, c.step.prev), src)]
                    return {"a": a, "src": src, "c": c}, hyp, lift(False)

                checks.append(Check(prop, P.name, f"{label} is final (no later term in {Q.name})", final))
    if st0.send is not None and st0.send.source is None:
        def forwarded(ctx):
            a = fresh(ctx, S, P, "a")
            return {"a": a}, [_site_hyp(a, "send")], lift(False)

        checks.append(Check("ring-locality", P.name, "sends only what it holds", forwarded))
    return checks
