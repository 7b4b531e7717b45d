"""well-formed: every busy iteration's PE is in 1..m, an active one's indices are in range, and a
send stores its datum as itself (or, for a symmetric array, as its transpose)."""

from __future__ import annotations

import numpy as np

from ringproof.model.ring.machine import transposed
from ringproof.proofs.ring.iterations import active, busy, fresh, ref_eq, sending
from ringproof.proofs.ring.normalize import PARAMS
from ringproof.proofs.ring.properties.base import Kind, first_bad, implies, in_range
from ringproof.schedules.expr import and_, between, or_


def _transpose(ref):
    return ref.array[tuple(reversed(ref.idx))]


def symbolic(S, P):
    def build(ctx):
        a = fresh(ctx, S, P, "a")
        st = a.step
        conds = [between(1, st.pe, PARAMS.m),
                 implies(active(a), and_(in_range(st.target), *[in_range(o) for o in st.operands]))]
        if st.send is not None:
            d, as_ = st.send.datum, st.send.stored
            legal = ref_eq(as_, d)
            if d.array in S.problem.symmetric_pairs and len(d.idx) == 2:
                legal = or_(legal, ref_eq(as_, _transpose(d)))
            conds.append(implies(sending(a), and_(in_range(d), in_range(as_), legal)))
        return {"a": a}, [busy(a)], and_(*conds)

    return [RANGES.check(P.name, build)]


def concrete(trace, k, pt, limit):
    a, snd = pt.active, pt.send
    bad = pt.busy & ((pt.pe < 1) | (pt.pe > trace.m))
    if pt.step.target is not None:
        bad |= a & (pt.target < 0)
    for o in pt.operands:
        bad |= a & (o < 0)
    bad |= snd & ((pt.sent < 0) | (pt.stored < 0))
    renamed = snd & ~bad & (pt.sent != pt.stored)
    if renamed.any():
        sym = [trace.layout.arrays.index(x) for x in trace.schedule.problem.symmetric_pairs]
        r = np.nonzero(renamed)[0]
        ok = np.isin(trace.layout.array_of(pt.sent[r]), sym) & (transposed(trace, pt.sent[r]) == pt.stored[r])
        bad[r[~ok]] = True
    return [RANGES.finding(pt.phase.name, "a PE or an index is out of range, or an illegal rename", [it])
            for it in first_bad(trace, k, bad, limit)]


RANGES = Kind("well-formed.ranges", "well-formed", "PE and indices in range, renames legal", symbolic, concrete)
KINDS = (RANGES,)
