"""Memory held per PE, measured on a trace: the data a PE holds in each cycle, and its peak.

What "held" means (one definition, for the measured figures and the prover's bounds alike). On
each PE, the events of a datum are:

    arrival   an input on its home PE at cycle 0; a copy or a moved sum received at the cycle after
              its send; the result of an op that is not an accumulation (a DIV, a NORM), at its cycle
    use       read as an operand, accumulated into (a node of its running sum), sent as a copy
    departure its running sum moved on to the next PE (a Move): the PE no longer holds it

A PE holds a datum from an arrival (or a first use, where nothing arrived) up to its last use
before the next arrival or departure, both cycles included: a datum is freed after its last use
there, and when it is moved on. An output is kept to the end of the run (its last cycle, or the
cycle after it where a datum sent in the last cycle arrives) on the PE where it ends (its last stay
there, not moved on). Within one cycle an arrival comes before a use and a use
before a departure. A copy received again where it is already held starts a new stay (the old one
ended at its last use). The occupancy of a PE in a cycle is the number of data it holds then; its
peak is the largest occupancy over the run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ARRIVE, USE, LEAVE = 0, 1, 2


@dataclass
class Stays:
    """Every stay of a datum on a PE: `pe` (1-based), `datum` (id), `first` and `last` cycles."""

    pe: np.ndarray
    datum: np.ndarray
    first: np.ndarray
    last: np.ndarray


def stays(trace) -> Stays:
    """The stays of a whole trace (`build_trace`), by the module's definition."""
    m = trace.m
    cols: list[tuple] = []

    def add(pe, ids, cycles, kind):
        pe, ids, cycles, kind = (np.asarray(x, dtype=np.int64).ravel() for x in np.broadcast_arrays(pe, ids, cycles, kind))
        ok = (ids >= 0) & (pe >= 1) & (pe <= m)
        cols.append((pe[ok], ids[ok], cycles[ok], kind[ok]))

    inputs = np.nonzero(trace.home > 0)[0]
    add(trace.home[inputs], inputs, 0, ARRIVE)
    for pt in trace.phases:
        pe, cyc, act = np.asarray(pt.pe), np.asarray(pt.cycle), np.asarray(pt.active, bool)
        for o in pt.operands:
            add(pe[act], np.broadcast_to(o, pe.shape)[act], cyc[act], USE)
        if pt.step.target is not None:
            touch = np.asarray(pt.node if pt.op.accumulates else act, bool)
            add(pe[touch], np.broadcast_to(pt.target, pe.shape)[touch], cyc[touch],
                USE if pt.op.accumulates else ARRIVE)
        snd = np.asarray(pt.send, bool)
        if snd.any():
            moves = np.broadcast_to(np.asarray(pt.moves, bool), pe.shape)[snd]
            add(pe[snd], np.broadcast_to(pt.sent, pe.shape)[snd], cyc[snd], np.where(moves, LEAVE, USE))
            add(pe[snd] % m + 1, np.broadcast_to(pt.stored, pe.shape)[snd], cyc[snd] + 1, ARRIVE)
    pe, ids, cyc, kind = (np.concatenate([c[i] for c in cols]) for i in range(4))
    order = np.lexsort((kind, cyc, ids, pe))
    pe, ids, cyc, kind = pe[order], ids[order], cyc[order], kind[order]
    if not pe.size:
        return Stays(pe, ids, cyc, cyc)
    end = max(trace.cycles - 1, int(cyc.max()))
    new_group = np.ones(pe.size, bool)
    new_group[1:] = (pe[1:] != pe[:-1]) | (ids[1:] != ids[:-1])
    after_leave = np.zeros(pe.size, bool)
    after_leave[1:] = kind[:-1] == LEAVE
    start = new_group | (kind == ARRIVE) | after_leave
    starts = np.flatnonzero(start)
    ends = np.append(starts[1:] - 1, pe.size - 1)
    first, last = cyc[starts], cyc[ends]
    # an output's last stay on a PE, not moved on, lasts to the end of the run
    group_end = np.append(new_group[1:], True)
    outputs = np.isin(trace.layout.array_of(ids[starts]), _output_arrays(trace))
    keep = outputs & group_end[ends] & (kind[ends] != LEAVE)
    last = np.where(keep, end, last)
    return Stays(pe[starts], ids[starts], first, last)


def occupancy(trace, st: Stays | None = None) -> np.ndarray:
    """[PE − 1, cycle]: the number of data each PE holds in each cycle (and in the cycle after the
    last, where a datum sent in the last cycle arrives)."""
    st = st if st is not None else stays(trace)
    cycles = max(trace.cycles, int(st.last.max(initial=0)) + 1, 1)
    diff = np.zeros((trace.m, cycles + 1), np.int64)
    np.add.at(diff, (st.pe - 1, st.first), 1)
    np.add.at(diff, (st.pe - 1, st.last + 1), -1)
    return np.cumsum(diff, axis=1)[:, :cycles]


def peak_per_pe(trace) -> list[int]:
    """[peak data held on PE 1, ..., PE m] of a whole trace (`build_trace`)."""
    return occupancy(trace).max(axis=1).tolist()


def at_peak(trace) -> dict:
    """{"per_pe": peak of each PE, and of the busiest PE: "pe", "cycle" (its first cycle at the
    peak), "peak", "by_array": {array: data of it held then}}."""
    st = stays(trace)
    occ = occupancy(trace, st)
    per = occ.max(axis=1)
    p = int(per.argmax())
    t = int(occ[p].argmax())
    live = (st.pe == p + 1) & (st.first <= t) & (st.last >= t)
    arrays = trace.layout.array_of(st.datum[live])
    by = {a.name: int((arrays == i).sum()) for i, a in enumerate(trace.layout.arrays) if (arrays == i).any()}
    return {"per_pe": per.tolist(), "pe": p + 1, "cycle": t, "peak": int(occ[p, t]), "by_array": by}


def _output_arrays(trace) -> list[int]:
    outputs = {a.name for a in trace.schedule.problem.outputs}
    return [i for i, a in enumerate(trace.layout.arrays) if a.name in outputs]
