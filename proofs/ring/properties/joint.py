"""coverage across phases: an array whose terms several phases compute, covered exactly once by
the schedule's joint inverse (`Schedule(..., inverses={array: (P, key) -> witness})`, the witness
an `At(phase, ...)` or an `Either` of them, so its conditions split the terms between the phases).

    coverage.joint-injective   no term done by two phases (each phase's own terms are checked
                               by coverage.injective)
    coverage.joint-onto        every term done where the joint inverse says: under each
                               alternative's condition the iteration exists, is active and
                               does that term

With coverage.terms (each active iteration does a term of the equation) of every such phase, each
required term is done exactly once, for every n.
"""

from __future__ import annotations

import numpy as np

from ringproof.model.ring.machine import describe
from ringproof.model.ring.trace import eval_witness
from ringproof.proofs.ring.iterations import active, alternatives, at, exists, fresh
from ringproof.proofs.ring.normalize import PARAMS
from ringproof.proofs.ring.properties.base import Kind, computes, generic_step, phases_computing, term_key
from ringproof.proofs.ring.properties.coverage import does_term, required_term
from ringproof.schedules.dsl import HOME, Op
from ringproof.schedules.expr import and_, eq, lift, not_, or_


def jointly_covered(S, array) -> bool:
    """Does the schedule give a joint inverse for `array`?"""
    return array is not None and array.name in S.inverses


def _equation(S, P):
    st = generic_step(P)
    if st.op is Op.MOVE or st.target is None or not jointly_covered(S, st.target.array):
        return None
    return S.problem.equation_for(st.target.array)


def _later(phases, P, computing) -> list:
    return [Q for Q in computing if phases.index(Q) > phases.index(P)]


# ------------------------------------------------------------------------------- no term in two phases


def injective_symbolic(S, P):
    eqn = _equation(S, P)
    if eqn is None:
        return []
    out = []
    for Q in _later(list(S.phases), P, phases_computing(S, eqn.target)):
        def build(ctx, Q=Q):
            a, b = fresh(ctx, S, P, "a"), fresh(ctx, S, Q, "b")
            sym = S.problem.transposable
            ka, kb = term_key(eqn, a.step, sym), term_key(eqn, b.step, sym)
            return {"a": a, "b": b}, [active(a), active(b)] + [eq(x, y) for x, y in zip(ka, kb)], lift(False)

        out.append(INJECTIVE.check(P.name, build, other=Q.name))
    return out


def _flat_keys(trace, pt, eqn):
    key = term_key(eqn, pt.step, trace.schedule.problem.transposable)
    ext = trace.layout.sizes
    dims = [ext[d] for d in eqn.target.dims] + ([ext[eqn.reduce]] if eqn.reduce else [])
    flat = np.zeros(pt.size, dtype=np.int64)
    for col, e in zip(key, dims):
        flat = flat * (e + 2) + np.clip(np.broadcast_to(np.asarray(col, dtype=np.int64), (pt.size,)), -1, e)
    return flat


def injective_concrete(trace, k, pt, limit):
    S = trace.schedule
    if pt.op is Op.MOVE or pt.step.target is None or not jointly_covered(S, pt.step.target.array):
        return []
    eqn = S.problem.equation_for(pt.step.target.array)
    out = []
    for j in range(k + 1, len(trace.phases)):
        qt = trace.phases[j]
        if not computes(qt, eqn.target):
            continue
        a, b = np.nonzero(pt.active)[0], np.nonzero(qt.active)[0]
        _, ia, ib = np.intersect1d(_flat_keys(trace, pt, eqn)[a], _flat_keys(trace, qt, eqn)[b],
                                   return_indices=True)
        out += [INJECTIVE.finding(pt.phase.name, "two phases do one term",
                                  [describe(trace, k, int(a[x])), describe(trace, j, int(b[y]))],
                                  other=qt.phase.name)
                for x, y in list(zip(ia, ib))[:limit]]
    return out


# ------------------------------------------------------------------------------- every term where it says


def _arrays(S):
    return [e for e in S.problem.equations if jointly_covered(S, e.target)]


def onto_symbolic(S):
    out = []
    for eqn in _arrays(S):
        symmetric = eqn.target in S.problem.symmetric_pairs

        def build(ctx, eqn=eqn, symmetric=symmetric):
            key, hyp = required_term(ctx, eqn, symmetric)
            goals, its = [], {"key": key}
            computing = {p.name for p in phases_computing(S, eqn.target)}
            for i, (cond, w) in enumerate(alternatives(S.inverses[eqn.target.name](PARAMS, tuple(key)))):
                if w is HOME or w.phase not in computing:
                    goals.append(not_(cond))          # an alternative that does no term: impossible
                    continue
                it = at(S, w)
                its[f"inv{i}"] = it
                match = does_term(term_key(eqn, it.step, S.problem.transposable), key, symmetric)
                goals.append(or_(not_(cond), and_(exists(it), active(it), match)))
            return its, hyp, and_(*goals)

        out.append(ONTO.check("-", build, array=eqn.target.name))
    return out


def onto_concrete(trace, limit):
    S, P, out = trace.schedule, trace.P, []
    for eqn in _arrays(S):
        ext = trace.layout.sizes
        dims = [ext[d] for d in eqn.target.dims] + ([ext[eqn.reduce]] if eqn.reduce else [])
        grids = np.meshgrid(*[np.arange(1, e + 1, dtype=np.int32) for e in dims], indexing="ij")
        req = [g.ravel() for g in grids]
        keep = np.ones(req[0].shape, dtype=bool)
        if eqn.where:
            keep &= np.broadcast_to(np.asarray(eqn.where(P, *req), dtype=bool), req[0].shape)
        symmetric = eqn.target in S.problem.symmetric_pairs
        if symmetric:
            keep &= req[1] <= req[0]
        req = [r[keep] for r in req]
        size = req[0].size
        good = np.zeros(size, dtype=bool)
        computing = {p.name for p in phases_computing(S, eqn.target)}
        for mask, ph, idx in eval_witness(S.inverses[eqn.target.name](P, tuple(req)), size).alternatives:
            if ph is None or ph not in computing:
                continue
            pt = trace.phase(ph)
            full = {n_: np.broadcast_to(np.asarray(idx[n_], dtype=np.int32), (size,)) for n_ in pt.phase.index_names}
            pos = pt.locate(full) if pt.size else np.full(size, -1)
            ok = pos >= 0
            p = np.where(ok, pos, 0)
            ok &= pt.active[p] if pt.size else False
            key = [np.broadcast_to(np.asarray(x, dtype=np.int64), (pt.size,))
                   for x in term_key(eqn, pt.step, S.problem.transposable)] if pt.size else []
            match = np.ones(size, dtype=bool)
            for col, r in zip(key, req):
                match &= col[p] == r
            if symmetric and key:
                alt = np.ones(size, dtype=bool)
                for col, r in zip(key, [req[1], req[0]] + req[2:]):
                    alt &= col[p] == r
                match |= alt
            good |= mask & ok & match
        out += [ONTO.finding("-", f"term {tuple(int(r[i]) for r in req)} is not done where the joint "
                             "inverse says", [], array=eqn.target.name)
                for i in np.nonzero(~good)[0][:limit]]
    return out


INJECTIVE = Kind("coverage.joint-injective", "coverage", "no term done by both this phase and {other}",
                 injective_symbolic, injective_concrete)
ONTO = Kind("coverage.joint-onto", "coverage", "every term of {array} done once across phases (joint inverse)",
            onto_symbolic, onto_concrete, schedule_level=True)
KINDS = (INJECTIVE, ONTO)
