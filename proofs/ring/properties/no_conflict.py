"""no-conflict: two busy iterations of one cycle use different PEs, and two active ones write
different targets; also across the phases of a lock-step group (the forms of a step chosen by
`ite`, or phases of one `group`), which share cycles. One busy PE per cycle is also one send per
link per cycle: PE l alone sends on the link l -> l + 1."""

from __future__ import annotations

import numpy as np

from ringproof.model.ring.machine import describe
from ringproof.model.ring.rules import assume
from ringproof.proofs.ring.iterations import active, busy, exists, fresh, ref_eq
from ringproof.proofs.ring.properties.base import Kind, implies, in_range
from ringproof.schedules.expr import and_, eq, not_


def symbolic(S, P):
    def build(ctx):
        a = fresh(ctx, S, P, "a")
        b = fresh(ctx, S, P, "b", share=a)
        hyp = [busy(a), busy(b), not_(eq(a.idx["l"], b.idx["l"]))]
        goal = and_(not_(eq(a.step.pe, b.step.pe)),
                    implies(and_(active(a), active(b), in_range(a.step.target)),   # else: well-formed
                            not_(ref_eq(a.step.target, b.step.target))))
        return {"a": a, "b": b}, hyp, goal

    return [SLOTS.check(P.name, build)]


_PAIRS_UP_TO = 8     # m(m − 1)/2 column comparisons beat sorting rows this short


def _maybe_shared(pt, col, sel, m) -> bool:
    """Whether two selected iterations of one cycle may share `col`. A trace lays out each cycle's
    m iterations as one row, so comparing within rows of m replaces a sort of the whole phase
    (column pairs for a few PEs, a sort of each row for more); the unselected get distinct
    negative stand-ins (a clash with a negative PE only sends the twin to its exact search)."""
    if pt.size != pt.tuples * m or m == 1:
        return pt.size != pt.tuples * m
    rows = np.where(sel.reshape(pt.tuples, m), col.reshape(pt.tuples, m), -1 - np.arange(m))
    if m <= _PAIRS_UP_TO:
        return any(bool((rows[:, a] == rows[:, b]).any()) for a in range(m) for b in range(a + 1, m))
    rows.sort(axis=1)
    return bool((rows[:, 1:] == rows[:, :-1]).any())


def concrete(trace, k, pt, limit):
    out = []
    in_range_ = pt.target >= 0               # an index out of range is well-formed's finding
    for what, col, sel in (("PE", pt.pe, pt.busy), ("target", pt.target, pt.active & in_range_)):
        if what == "target" and pt.step.target is None:
            continue
        if not _maybe_shared(pt, col, sel, trace.m):
            continue
        a = np.nonzero(sel)[0]
        key = pt.cycle[a] * (trace.layout.size + trace.m + 2) + col[a]
        order = a[np.argsort(key, kind="stable")]
        kk = pt.cycle[order] * (trace.layout.size + trace.m + 2) + col[order]
        dup = np.nonzero(kk[1:] == kk[:-1])[0]
        for i in dup[:limit]:
            out.append(SLOTS.finding(pt.phase.name, f"two iterations share a {what} in one cycle",
                                     [describe(trace, k, int(order[i])), describe(trace, k, int(order[i + 1]))]))
    return out


def _partners(S, k: int) -> list[int]:
    """The later phases of phase k's lock-step group."""
    slots = S.slots
    return [j for j in range(k + 1, len(slots)) if slots[j] == slots[k]]


def group_symbolic(S, P):
    out = []
    for j in _partners(S, S.phases.index(P)):
        Q = S.phases[j]

        def build(ctx, Q=Q):
            a = fresh(ctx, S, P, "a")
            b = fresh(ctx, S, Q, "b", share=a)
            hyp = [exists(b), busy(a), busy(b)]
            goal = and_(not_(eq(a.step.pe, b.step.pe)),
                        implies(and_(active(a), active(b), in_range(a.step.target)),
                                not_(ref_eq(a.step.target, b.step.target))))
            return {"a": a, "b": b}, hyp, goal

        out.append(SHARED.check(P.name, build, other=Q.name))
    return out


def group_concrete(trace, k, pt, limit):
    out = []
    for j in _partners(trace.schedule, k):
        qt = trace.phases[j]
        for what, cols, sels in (("PE", (pt.pe, qt.pe), (pt.busy, qt.busy)),
                                 ("target", (pt.target, qt.target), (pt.active & (pt.target >= 0),
                                                                      qt.active & (qt.target >= 0)))):
            if what == "target" and (pt.step.target is None or qt.step.target is None):
                continue
            a, b = np.nonzero(sels[0])[0], np.nonzero(sels[1])[0]
            span = trace.layout.size + trace.m + 2
            ka, kb = pt.cycle[a] * span + cols[0][a], qt.cycle[b] * span + cols[1][b]
            both, ia, ib = np.intersect1d(ka, kb, return_indices=True)
            for x, y in list(zip(ia, ib))[:limit]:
                out.append(SHARED.finding(pt.phase.name, f"two iterations share a {what} in one cycle",
                                          [describe(trace, k, int(a[x])), describe(trace, j, int(b[y]))],
                                          other=qt.phase.name))
    return out


assume("the no-conflict twins (distinct busy slots)", ops_per_cycle=1)
SLOTS = Kind("no-conflict.slots", "no-conflict", "one op per PE per cycle, no write clash", symbolic, concrete)
SHARED = Kind("no-conflict.shared", "no-conflict", "one op per PE per cycle, no write clash with {other}",
              group_symbolic, group_concrete)
KINDS = (SLOTS, SHARED)
