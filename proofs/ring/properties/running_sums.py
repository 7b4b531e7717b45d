"""ring-locality of running sums: each non-first contribution finds the partial sum where its
`prev` witness says (same PE, or moved there from the previous PE), each sum starts once, and no
two contributions continue the same partial sum (sums never fork)."""

from __future__ import annotations

import numpy as np

from ringproof.proofs.ring.iterations import (at, before, exists, fresh, moves, next_pe, node, ref_eq,
                                              same_iteration, starts)
from ringproof.proofs.ring.properties.base import (Kind, any_repeated, any_shared, computes, first_bad, generic_step,
                                                  locate, phases_computing)
from ringproof.schedules.expr import and_, eq, lift, mod, not_, or_


def _accumulating(P) -> bool:
    return generic_step(P).op.accumulates


def _partners(S, P):
    """The phases that add to the same array as P (P included)."""
    return phases_computing(S, generic_step(P).target.array)


# ------------------------------------------------------------------------------- prev witness


def prev_symbolic(S, P):
    if not _accumulating(P):
        return []

    def build(ctx):
        a = fresh(ctx, S, P, "a")
        src = at(S, a.step.prev)
        ps, pa = src.step.pe, a.step.pe
        goal = and_(exists(src), node(src), ref_eq(src.step.target, a.step.target), before(src, a),
                    or_(and_(eq(ps, pa), not_(moves(src))), and_(eq(next_pe(ps), pa), moves(src))))
        return {"a": a, "prev": src}, [node(a), not_(starts(a))], goal

    return [PREV.check(P.name, build)]


def prev_concrete(trace, k, pt, limit):
    if not pt.op.accumulates:
        return []
    need = pt.node & ~pt.starts
    (mask, ph, idx), = pt.prev.alternatives
    q, pos = locate(trace, ph, idx, pt.size)
    ok = pos >= 0
    if q.size == 0:
        ok[:] = False
    else:
        p = np.where(ok, pos, 0)
        ok &= q.node[p] & (q.target[p] == pt.target) & (q.cycle[p] < pt.cycle)
        qpe = q.pe[p]
        ok &= np.where(q.moves[p], mod(qpe, trace.m) + 1 == pt.pe, qpe == pt.pe)
    return [PREV.finding(pt.phase.name, "the previous term is not where the witness says", [it])
            for it in first_bad(trace, k, need & ~ok, limit)]


# ------------------------------------------------------------------------------- one first term


def _never_together(S, P, kind, hypotheses):
    """For each phase Q adding to P's array: no a in P and b in Q (a ≠ b) satisfy hypotheses(a, b)."""
    if not _accumulating(P):
        return []
    out = []
    for Q in _partners(S, P):
        def build(ctx, Q=Q):
            a, b = fresh(ctx, S, P, "a"), fresh(ctx, S, Q, "b")
            return {"a": a, "b": b}, [not_(same_iteration(a, b))] + hypotheses(a, b), lift(False)

        out.append(kind.check(P.name, build, other=Q.name))
    return out


def first_symbolic(S, P):
    return _never_together(S, P, FIRST, lambda a, b: [starts(a), starts(b), ref_eq(a.step.target, b.step.target)])


def _partner_traces(trace, pt):
    return [qt for qt in trace.phases if computes(qt, pt.step.target.array)]


def first_concrete(trace, k, pt, limit):
    if not pt.op.accumulates:
        return []
    out = []
    mine = pt.target[pt.starts]
    for qt in _partner_traces(trace, pt):
        twice = _shared_values(mine, None if qt is pt else qt.target[qt.starts])
        if twice.size:
            out.append(FIRST.finding(pt.phase.name, f"{trace.layout.name(int(twice[0]))} is started twice",
                                     other=qt.phase.name))
    return out


def _shared_values(mine, theirs):
    """Values twice in `mine` (theirs None: the same phase), else the values in both."""
    if theirs is None:
        if not any_repeated(mine):
            return mine[:0]
        u, c = np.unique(mine, return_counts=True)
        return u[c > 1]
    if not any_shared(mine, theirs):
        return mine[:0]
    return np.intersect1d(mine, theirs)


# ------------------------------------------------------------------------------- sums never fork


def fork_symbolic(S, P):
    return _never_together(S, P, FORK, lambda a, b: [
        node(a), node(b), not_(starts(a)), not_(starts(b)), same_iteration(at(S, a.step.prev), at(S, b.step.prev))])


def _prev_ids(trace, qt):
    """Global ids (phase number, position) of the previous terms qt's continuing nodes name."""
    (_, ph, idx), = qt.prev.alternatives
    _, pos = locate(trace, ph, idx, qt.size)
    sel = qt.node & ~qt.starts & (pos >= 0)
    return trace.schedule.phase_index(ph) * (1 << 40) + pos[sel].astype(np.int64)


def fork_concrete(trace, k, pt, limit):
    if not pt.op.accumulates:
        return []
    out = []
    mine = _prev_ids(trace, pt)
    for qt in _partner_traces(trace, pt):
        if _shared_values(mine, None if qt is pt else _prev_ids(trace, qt)).size:
            out.append(FORK.finding(pt.phase.name, "two terms claim the same previous term", other=qt.phase.name))
    return out


PREV = Kind("running-sums.prev", "ring-locality", "prev witness: the partial sum is here", prev_symbolic,
            prev_concrete)
FIRST = Kind("running-sums.first", "ring-locality", "one first term per sum (with {other})", first_symbolic,
             first_concrete)
FORK = Kind("running-sums.fork", "ring-locality", "partial sums never fork (with {other})", fork_symbolic,
            fork_concrete)
KINDS = (PREV, FIRST, FORK)
