"""placement: each output element ends on the PE the schedule declares (`Schedule(placement=...)`).

Where a datum ends is where its last node leaves it: the PE of the last iteration that touches it
(adds a term, forwards the partial sum, or computes it), or the next PE when that iteration sends
the running sum on. Two ways to prove it for every n:
- without a witness, every node must leave the datum on its placement PE (a sum that stays where it
  is computed, as y in Algorithms 1-3). A node that leaves it elsewhere is only a counterexample if
  it is the last one: the refutation is replayed on the enumerated trace, where the last node is
  known, and an unconfirmed one is `unknown`;
- with `ends=lambda P, ref: At(phase, ...)` (a witness, checked): that iteration is a node of the
  datum, no node of it follows (no iteration's `prev` is the witness), and it leaves the datum on
  its placement PE. A sum that travels the ring and returns home needs this witness.
The concrete twin enumerates each datum's last node and compares where it ends with `placement`.
"""

from __future__ import annotations

import numpy as np

from ringproof.errors import BadInput
from ringproof.proofs.ring.iterations import (It, active, alternatives, at, exists, fresh, moves, new_var, next_pe,
                                              node, ref_eq, same_iteration, starts)
from ringproof.proofs.ring.normalize import PARAMS
from ringproof.proofs.ring.properties.base import Kind, computes, describe, extent, phases_computing
from ringproof.schedules.dsl import At
from ringproof.schedules.expr import and_, eq, ite, lift, not_, var


def outputs(S) -> list:
    """The arrays whose placement is declared: the problem's outputs."""
    return list(S.problem.outputs) if S.placement is not None else []


def _touches(it: It):
    return node(it) if it.step.op.accumulates else active(it)


def _after(it: It):
    """The PE that holds the datum after the iteration: its own, or the next if it moves it on."""
    return ite(moves(it), next_pe(it.step.pe), it.step.pe)


# ------------------------------------------------------------------------------- symbolic


def _key(ctx, S, array):
    """Fresh indices of an element of `array` that has a term (the equation's mask, if any)."""
    eqn = S.problem.equation_for(array)
    dims = list(array.dims) + ([eqn.reduce] if eqn.where is not None and eqn.reduce else [])
    names = [f"key.{i}" for i in range(len(dims))]
    for name, d in zip(names, dims):
        new_var(ctx, name, 1, extent(d))
    key = [var(nm) for nm in names]
    hyp = [lift(eqn.where(PARAMS, *key))] if eqn.where is not None else []
    return array[tuple(key[:len(array.dims)])], key, hyp


def _witness(S, ref) -> It:
    w = S.ends(PARAMS, ref)
    if not isinstance(w, At):
        raise BadInput(f"schedule {S.name}: `ends` must give one At(phase, ...) per output element")
    return at(S, w)


def _declared_end(ctx, S, array):
    """An element `ref` of `array` (fresh indices, `key`), the iteration `ends` names as its end, the
    hypotheses on the key, and what makes that iteration the element's end: it exists, touches the
    array and computes `ref`."""
    ref, key, hyp = _key(ctx, S, array)
    e = _witness(S, ref)
    return ref, {"key": key, "end": e}, hyp, [exists(e), _touches(e), ref_eq(e.step.target, ref)]


def ends_symbolic(S):
    out = []
    for array in outputs(S):
        if S.ends is None:
            for Q in phases_computing(S, array):
                def build(ctx, Q=Q):
                    a = fresh(ctx, S, Q, "a")
                    return {"a": a}, [_touches(a)], eq(_after(a), S.placement(PARAMS, a.step.target))

                out.append(ENDS.check(array.name, build, array=array.name))
            continue

        def build(ctx, array=array):
            ref, names, hyp, is_end = _declared_end(ctx, S, array)
            return names, hyp + is_end, eq(_after(names["end"]), S.placement(PARAMS, ref))

        out.append(ENDS.check(array.name, build, array=array.name))
    return out


def witness_symbolic(S):
    out = []
    for array in outputs(S):
        if S.ends is None:
            continue

        def build(ctx, array=array):
            _, names, hyp, is_end = _declared_end(ctx, S, array)
            return names, hyp, and_(*is_end)

        out.append(WITNESS.check(array.name, build, array=array.name))
    return out


def last_symbolic(S):
    out = []
    for array in outputs(S):
        if S.ends is None:
            continue
        for R in phases_computing(S, array):
            if not R.step(PARAMS, _generic(R)).op.accumulates:
                continue
            for ai in range(len(alternatives(R.step(PARAMS, _generic(R)).prev))):
                def build(ctx, array=array, R=R, ai=ai):
                    ref, names, hyp, _ = _declared_end(ctx, S, array)
                    c = fresh(ctx, S, R, "c")
                    cond, w = alternatives(c.step.prev)[ai]
                    hyp += [node(c), not_(starts(c)), cond, ref_eq(c.step.target, ref),
                            same_iteration(at(S, w), names["end"])]
                    return {**names, "c": c}, hyp, lift(False)

                out.append(LAST.check(array.name, build, array=array.name, other=R.name))
    return out


def _generic(phase):
    from types import SimpleNamespace
    return SimpleNamespace(**{name: var(name) for name in phase.index_names})


# ------------------------------------------------------------------------------- concrete


def _last_nodes(trace, array):
    """{datum id: (phase index, position)} of the last node of each element of `array`."""
    ids, cycles, where = [], [], []
    for k, pt in enumerate(trace.phases):
        if not computes(pt, array):
            continue
        touch = pt.node if pt.op.accumulates else pt.active
        pos = np.nonzero(touch & (pt.target >= 0))[0]
        ids.append(pt.target[pos])
        cycles.append(pt.cycle[pos])
        where.append(np.stack([np.full(pos.size, k), pos], axis=1))
    if not ids:
        return {}
    ids, cycles, where = np.concatenate(ids), np.concatenate(cycles), np.concatenate(where)
    order = np.lexsort((cycles, ids))
    last = np.ones(order.size, dtype=bool)
    last[:-1] = ids[order][1:] != ids[order][:-1]
    return {int(ids[i]): (int(where[i][0]), int(where[i][1])) for i in order[last]}


def _element(trace, array, datum: int):
    ext = trace.layout.extents[array.name]
    idx = np.unravel_index(datum - trace.layout.offset[array.name], ext)
    return array[tuple(int(i) + 1 for i in idx)]


def _leaves(trace, k, pos) -> int:
    pt = trace.phases[k]
    pe = int(pt.pe[pos])
    return pe % trace.m + 1 if bool(pt.moves[pos]) else pe


def _declared(trace, array, data: list) -> np.ndarray:
    """The PE `placement` declares for each datum id of `array` in `data`, in one call on index
    arrays (as the trace reads `home`: one Python call per element was half a bounded sweep)."""
    ext = trace.layout.extents[array.name]
    idx = np.unravel_index(np.asarray(data, dtype=np.int64) - trace.layout.offset[array.name], ext)
    ref = array[tuple(i + 1 for i in idx)]
    return np.broadcast_to(np.asarray(trace.schedule.placement(trace.P, ref), dtype=np.int64), (len(data),))


def ends_concrete(trace, limit):
    S, out = trace.schedule, []
    for array in outputs(S):
        lasts = sorted(_last_nodes(trace, array).items())
        if not lasts:
            continue
        declared = _declared(trace, array, [datum for datum, _ in lasts])
        for (datum, (k, pos)), want in zip(lasts, declared):
            got = _leaves(trace, k, pos)
            if got != int(want):
                out.append(ENDS.finding(array.name, f"{trace.layout.name(datum)} ends on PE {got}, not on PE {want}",
                                        [describe(trace, k, pos)], array=array.name))
                if len(out) >= limit:
                    return out
    return out


def _witnessed(trace):
    """(array, datum, last node (k, pos) or None if no node touches the datum, witness (k, pos) or
    None if it does not touch the datum) for each output element, where an end witness is declared
    (every element, as the symbolic check quantifies: one no node touches has no witness either)."""
    S = trace.schedule
    for array in outputs(S):
        if S.ends is None:
            continue
        lasts = _last_nodes(trace, array)
        first = trace.layout.offset[array.name]
        for datum in range(first, first + int(np.prod(trace.layout.extents[array.name]))):
            if datum not in lasts:
                yield array, datum, None, None
                continue
            k, pos = lasts[datum]
            w = S.ends(trace.P, _element(trace, array, datum))
            names = [p.phase.name for p in trace.phases]
            here = names.index(w.phase) if isinstance(w, At) and w.phase in names else None
            q = trace.phases[here] if here is not None else None
            found = -1 if q is None or q.size == 0 else int(q.locate(
                {n_: np.asarray([w.idx[n_]], dtype=np.int32) for n_ in q.phase.index_names})[0])
            touch = found >= 0 and bool((q.node if q.op.accumulates else q.active)[found]) \
                and int(q.target[found]) == datum
            yield array, datum, (k, pos), ((here, found) if touch else None)


def witness_concrete(trace, limit):
    return [WITNESS.finding(array.name, f"the end witness of {trace.layout.name(datum)} does not touch it"
                            + ("" if last else " (no node touches it)"),
                            [describe(trace, *last)] if last else [], array=array.name)
            for array, datum, last, w in _witnessed(trace) if w is None][:limit]


def last_concrete(trace, limit):
    return [LAST.finding(array.name, f"{trace.layout.name(datum)} has a node after its end witness",
                         [describe(trace, *w), describe(trace, *last)], array=array.name,
                         other=trace.phases[last[0]].phase.name)
            for array, datum, last, w in _witnessed(trace) if w is not None and w != last][:limit]


ENDS = Kind("placement.ends", "placement", "{array} ends on its placement PE", ends_symbolic, ends_concrete,
            schedule_level=True)
WITNESS = Kind("placement.witness", "placement", "the end witness of {array} touches it", witness_symbolic,
               witness_concrete, schedule_level=True)
LAST = Kind("placement.last", "placement", "no node of {array} in {other} after its end witness", last_symbolic,
            last_concrete, schedule_level=True)
KINDS = (ENDS, WITNESS, LAST)
