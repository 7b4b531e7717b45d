"""Memory held per PE, measured on a trace: the peak number of data a PE holds at once.

A PE holds a datum from the first cycle it is there — an input on its home PE from cycle 0, a
received copy or moved partial sum from the cycle after the send, a value it computes from the
cycle of that op — to the last cycle it is there: its last use on that PE (read as an operand,
accumulated, sent on), or the end of the schedule for an output on the PE where it ends. A datum
that leaves a PE and comes back is counted as held in between (the PE keeps its place). The peak
of a PE is the largest number of data it holds in one cycle.
"""

from __future__ import annotations

import numpy as np


def peak_per_pe(trace) -> list[int]:
    """[peak data held on PE 1, ..., PE m] of a whole trace (`build_trace`)."""
    m, end = trace.m, max(trace.cycles - 1, 0)
    pe_l, ids_l, start_l, stop_l = [], [], [], []

    def add(pe, ids, first, last):
        ok = (ids >= 0) & (pe >= 1) & (pe <= m)
        pe_l.append(np.asarray(pe)[ok]), ids_l.append(np.asarray(ids)[ok])
        start_l.append(np.asarray(first)[ok]), stop_l.append(np.asarray(last)[ok])

    inputs = np.nonzero(trace.home > 0)[0]
    add(trace.home[inputs], inputs, np.zeros(inputs.size, np.int64), np.zeros(inputs.size, np.int64))
    outputs = {trace.layout.offset[a.name] for a in trace.schedule.problem.outputs}
    for pt in trace.phases:
        pe, cyc, act = np.asarray(pt.pe), np.asarray(pt.cycle), pt.active
        for o in pt.operands:
            add(pe[act], np.broadcast_to(o, pe.shape)[act], cyc[act], cyc[act])
        if pt.step.target is not None:
            touch = pt.node if pt.op.accumulates else act
            tgt = np.broadcast_to(pt.target, pe.shape)[touch]
            last = np.where(np.isin(trace.layout.array_of(tgt), _array_indices(trace, outputs)), end, cyc[touch])
            add(pe[touch], tgt, cyc[touch], last)
        snd = pt.send
        if snd.any():
            add(pe[snd], pt.sent[snd], cyc[snd], cyc[snd])
            add(pe[snd] % m + 1, pt.stored[snd], cyc[snd] + 1, cyc[snd] + 1)
    pe, ids = np.concatenate(pe_l), np.concatenate(ids_l)
    start, stop = np.concatenate(start_l), np.concatenate(stop_l)
    key = pe.astype(np.int64) * (int(trace.layout.size) + 1) + ids
    order = np.argsort(key, kind="stable")
    key, pe, start, stop = key[order], pe[order], start[order], stop[order]
    first = np.ones(key.size, bool)
    first[1:] = key[1:] != key[:-1]
    groups = np.cumsum(first) - 1
    lo = np.minimum.reduceat(start, np.nonzero(first)[0]) if key.size else start
    hi = np.maximum.reduceat(stop, np.nonzero(first)[0]) if key.size else stop
    owner = pe[first]
    del groups
    peaks = [0] * m
    for p in range(1, m + 1):
        mine = owner == p
        events = np.concatenate([np.stack([lo[mine], np.ones(mine.sum(), np.int64)], 1),
                                 np.stack([hi[mine] + 1, -np.ones(mine.sum(), np.int64)], 1)])
        if events.size:
            events = events[np.lexsort((events[:, 1], events[:, 0]))]     # a release before an arrival
            peaks[p - 1] = int(np.cumsum(events[:, 1]).max())
    return peaks


def _array_indices(trace, offsets) -> list[int]:
    return [i for i, a in enumerate(trace.layout.arrays) if trace.layout.offset[a.name] in offsets]
