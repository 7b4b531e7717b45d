"""coverage: every required term of the problem's equations is done exactly once — each active
iteration does a term of its target's equation, no term twice, and every term where the phase's
`inverse` witness says; every computed array has a phase computing it. An array several phases
compute needs the schedule's joint inverse (`joint.py` checks across the phases)."""

from __future__ import annotations

import numpy as np

from ringproof.errors import BadInput
from ringproof.model.ring.machine import describe
from ringproof.proofs.ring.iterations import It, active, exists, fresh, new_var, ref_eq, same_iteration
from ringproof.proofs.ring.normalize import PARAMS, NormalizationError
from ringproof.proofs.ring.properties.base import (Kind, any_repeated, computes, extent, first_bad, generic_step,
                                                  phases_computing, term_key, transposed_ref)
from ringproof.schedules.dsl import Op
from ringproof.schedules.expr import and_, between, eq, le, lift, not_, or_, var


def _equation(S, st):
    return None if st.op is Op.MOVE else S.problem.equation_for(st.target.array)


def _shared(S, P, joint: bool = False):
    """The equation P's terms belong to, or None when P computes nothing or shares its array
    with another phase (then only `ONE_PHASE` applies, or with `joint`, the array's joint inverse
    given: the checks of each phase's own terms, beside `joint.py`'s across the phases)."""
    eqn = _equation(S, generic_step(P))
    if eqn is None or (len(phases_computing(S, eqn.target)) > 1
                       and not (joint and eqn.target.name in S.inverses)):
        return None
    return eqn


def _orientation(S, eqn) -> str:
    return "in one orientation " if eqn.target in S.problem.symmetric_pairs else ""


# ------------------------------------------------------------------------------- each term is one


def terms_symbolic(S, P):
    eqn = _shared(S, P, joint=True)
    if eqn is None:
        return []
    def build(ctx):
        a = fresh(ctx, S, P, "a")
        st = a.step
        sym = S.problem.transposable
        key = term_key(eqn, st, sym)
        want = eqn.operands(PARAMS, *key)
        if st.op is not eqn.op or len(st.operands) != len(want):
            return {"a": a}, [active(a)], lift(False)
        goal = [or_(ref_eq(x, y), ref_eq(x, transposed_ref(y))) if y.array in sym and len(y.idx) == 2
                else ref_eq(x, y) for x, y in zip(st.operands, want)]
        if eqn.reduce:
            goal.append(between(1, key[-1], extent(eqn.reduce)))
        if eqn.where:
            goal.append(lift(eqn.where(PARAMS, *key)))
        return {"a": a}, [active(a)], and_(*goal)

    return [TERMS.check(P.name, build, array=eqn.target.name)]


def _keys(trace, pt, eqn):
    """Per iteration: the term key (target indices + reduction index) as integer arrays."""
    key = term_key(eqn, pt.step, trace.schedule.problem.transposable)
    return [np.broadcast_to(np.asarray(x, dtype=np.int32), (pt.size,)) for x in key]


def _extents(trace, eqn):
    ext = trace.layout.sizes
    return ext, [ext[d] for d in eqn.target.dims] + ([ext[eqn.reduce]] if eqn.reduce else [])


def _concrete_equation(trace, pt, joint: bool = False):
    if pt.op is Op.MOVE:
        return None
    eqn = trace.schedule.problem.equation_for(pt.step.target.array)
    if len([q for q in trace.phases if computes(q, eqn.target)]) > 1 and \
            not (joint and eqn.target.name in trace.schedule.inverses):
        return None
    return eqn


def terms_concrete(trace, k, pt, limit):
    eqn = _concrete_equation(trace, pt, joint=True)
    if eqn is None:
        return []
    name, a = pt.phase.name, pt.active
    if pt.op is not eqn.op:
        return [TERMS.finding(name, f"the step does {pt.op.value}, {eqn.target.name} is defined by {eqn.op.value}",
                              first_bad(trace, k, a, 1), array=eqn.target.name)]
    key = _keys(trace, pt, eqn)
    ext, _ = _extents(trace, eqn)
    want = eqn.operands(trace.P, *key)
    ok = np.ones(pt.size, dtype=bool)
    sym = trace.schedule.problem.transposable
    for got, ref in zip(pt.operands, want):
        same = got == trace.layout.ids(ref, pt.size)
        if ref.array in sym and len(ref.idx) == 2:      # either orientation names the datum
            same |= got == trace.layout.ids(transposed_ref(ref), pt.size)
        ok &= same
    if eqn.reduce:
        ok &= (key[-1] >= 1) & (key[-1] <= ext[eqn.reduce])
    if eqn.where:
        ok &= np.broadcast_to(np.asarray(eqn.where(trace.P, *key), dtype=bool), (pt.size,))
    return [TERMS.finding(name, "the operands are not a term of the equation", [it], array=eqn.target.name)
            for it in first_bad(trace, k, a & ~ok, limit)]


# ------------------------------------------------------------------------------- one phase per array


def one_phase_symbolic(S, P):
    eqn = _equation(S, generic_step(P))
    if eqn is None or len(phases_computing(S, eqn.target)) <= 1 or eqn.target.name in S.inverses:
        return []

    def several(ctx):
        raise NormalizationError(f"{eqn.target.name} is computed by several phases; coverage across "
                                 f"phases needs a joint inverse (Schedule(..., inverses={{{eqn.target.name!r}: ...}}))")

    return [ONE_PHASE.check(P.name, several)]


def one_phase_concrete(trace, k, pt, limit):
    """The prover reports an array computed by several phases without a joint inverse as unknown;
    enumeration has no per-phase definition to check it against either (with one: joint.py)."""
    return []


# ------------------------------------------------------------------------------- injective


def injective_symbolic(S, P):
    eqn = _shared(S, P, joint=True)
    if eqn is None:
        return []

    def build(ctx):
        a, b = fresh(ctx, S, P, "a"), fresh(ctx, S, P, "b")
        sym = S.problem.transposable
        ka, kb = term_key(eqn, a.step, sym), term_key(eqn, b.step, sym)
        hyp = [active(a), active(b), not_(same_iteration(a, b))] + [eq(x, y) for x, y in zip(ka, kb)]
        return {"a": a, "b": b}, hyp, lift(False)

    return [INJECTIVE.check(P.name, build)]


def injective_concrete(trace, k, pt, limit):
    eqn = _concrete_equation(trace, pt, joint=True)
    if eqn is None or pt.op is not eqn.op:
        return []
    key = _keys(trace, pt, eqn)
    _, dims = _extents(trace, eqn)
    wide = np.prod([e + 2 for e in dims], dtype=float) >= 2**31
    flat = np.zeros(pt.size, dtype=np.int64 if wide else np.int32)
    for col, e in zip(key, dims):
        flat = flat * (e + 2) + np.clip(col, -1, e)
    act = np.nonzero(pt.active)[0]
    if not any_repeated(flat[act]):
        return []
    order = act[np.argsort(flat[act], kind="stable")]
    dup = np.nonzero(flat[order][1:] == flat[order][:-1])[0]
    return [INJECTIVE.finding(pt.phase.name, "two iterations do one term",
                              [describe(trace, k, int(order[i])), describe(trace, k, int(order[i + 1]))])
            for i in dup[:limit]]


# ------------------------------------------------------------------------------- onto (inverse witness)


def onto_symbolic(S, P):
    eqn = _shared(S, P)
    if eqn is None:
        return []
    symmetric = eqn.target in S.problem.symmetric_pairs

    def build(ctx):
        key, hyp = required_term(ctx, eqn, symmetric)
        if P.inverse is None:
            at = f"{P.defined_at}: " if P.defined_at else ""
            raise BadInput(f"{at}phase {P.name}: coverage needs an `inverse` witness (Phase(..., inverse=...); "
                           "docs/dsl.md)")
        inv = P.inverse(PARAMS, tuple(key))
        it = It(P, S.phases.index(P), {k: lift(inv[k]) for k in P.index_names})
        match = does_term(term_key(eqn, it.step, S.problem.transposable), key, symmetric)
        return {"key": key, "inv": it}, hyp, and_(exists(it), active(it), match)

    return [ONTO.check(P.name, build, orientation=_orientation(S, eqn))]


def required_term(ctx, eqn, symmetric: bool):
    """A required term of `eqn` as fresh solver variables key.0, key.1, ... within their extents:
    (key, hypotheses: the equation's `where` and, for a symmetric pair, the one orientation required)."""
    dims = list(eqn.target.dims) + ([eqn.reduce] if eqn.reduce else [])
    names = [f"key.{i}" for i in range(len(dims))]
    for name, d in zip(names, dims):
        new_var(ctx, name, 1, extent(d))
    key = [var(nm) for nm in names]
    hyp = [lift(eqn.where(PARAMS, *key))] if eqn.where else []
    if symmetric:
        hyp.append(lift(le(key[1], key[0])))
    return key, hyp


def does_term(got, key, symmetric: bool):
    """The term key `got` is `key` (for a symmetric pair: in either orientation)."""
    match = and_(*[eq(x, y) for x, y in zip(got, key)])
    if symmetric:
        match = or_(match, and_(*[eq(x, y) for x, y in zip(got, [key[1], key[0]] + key[2:])]))
    return match


def onto_concrete(trace, k, pt, limit):
    eqn = _concrete_equation(trace, pt)
    if eqn is None or pt.op is not eqn.op or pt.phase.inverse is None:
        return []
    S, P = trace.schedule, trace.P
    key = _keys(trace, pt, eqn)
    _, dims = _extents(trace, eqn)
    grids = np.meshgrid(*[np.arange(1, e + 1, dtype=np.int32) for e in dims], indexing="ij")
    req = [g.ravel() for g in grids]
    symmetric = eqn.target in S.problem.symmetric_pairs
    if eqn.where or symmetric:
        keep = np.ones(req[0].shape, dtype=bool)
        if eqn.where:
            keep &= np.broadcast_to(np.asarray(eqn.where(P, *req), dtype=bool), req[0].shape)
        if symmetric:
            keep &= req[1] <= req[0]
        req = [r[keep] for r in req]
    inv = pt.phase.inverse(P, tuple(req))
    size = req[0].size
    idx = {n_: np.broadcast_to(np.asarray(inv[n_], dtype=np.int32), (size,)) for n_ in pt.phase.index_names}
    pos = pt.locate(idx)
    good = pos >= 0
    good[good] &= pt.active[pos[good]]
    p = np.where(good, pos, 0)
    match = np.ones(size, dtype=bool)
    for col, r in zip(key, req):
        match &= col[p] == r if pt.size else False      # an empty phase does no term
    if symmetric:
        swapped = [req[1], req[0]] + req[2:]
        alt = np.ones(size, dtype=bool)
        for col, r in zip(key, swapped):
            alt &= col[p] == r if pt.size else False
        match |= alt
    good &= match
    name = pt.phase.name
    return [ONTO.finding(name, f"term {tuple(int(r[i]) for r in req)} is not done where the inverse says",
                         [{"phase": name, **{n_: int(idx[n_][i]) for n_ in idx}}],
                         orientation=_orientation(S, eqn))
            for i in np.nonzero(~good)[0][:limit]]


# ------------------------------------------------------------------------------- every array computed


def computed_symbolic(S):
    return [COMPUTED.check("-", lambda ctx: ({}, [], lift(False)), array=eqn.target.name)
            for eqn in S.problem.equations if not phases_computing(S, eqn.target)]


def computed_concrete(trace, limit):
    return [COMPUTED.finding("-", "no phase has it as target", array=eqn.target.name)
            for eqn in trace.schedule.problem.equations
            if not [pt for pt in trace.phases if computes(pt, eqn.target)]]


TERMS = Kind("coverage.terms", "coverage", "each term is one of {array}'s", terms_symbolic, terms_concrete)
ONE_PHASE = Kind("coverage.one-phase", "coverage", "one phase per array", one_phase_symbolic, one_phase_concrete)
INJECTIVE = Kind("coverage.injective", "coverage", "no term done twice (injective)", injective_symbolic,
                 injective_concrete)
ONTO = Kind("coverage.onto", "coverage", "every term done {orientation}(inverse witness)", onto_symbolic,
            onto_concrete)
COMPUTED = Kind("coverage.computed", "coverage", "nothing computes {array}", computed_symbolic, computed_concrete,
                schedule_level=True)
KINDS = (TERMS, ONE_PHASE, INJECTIVE, ONTO, COMPUTED)
