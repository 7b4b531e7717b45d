"""Concrete evaluation of a schedule for given n, m: its iterations as numpy arrays.

The same step functions the prover reads symbolically are called here with numpy int32 arrays (one
element per iteration), so a bounded check is a handful of vectorized passes, not a Python loop.

`build_trace` holds every iteration at once (O(n³) records: the bounded tier, small n). `Stream`
reads the same iterations lazily, a block of whole cycles at a time, in time order (the ring
simulator, any n), or only the cycles asked for (`Stream.window`: a picture, a violation's
iterations). A `PhaseTrace` may hold a subset of its phase's iterations (a block or a window);
`start` and `tuples` always describe the whole phase.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from types import SimpleNamespace
from typing import Iterator

import numpy as np

from ringproof.model.ring import vocabulary
from ringproof.model.ring.layout import Layout
from ringproof.schedules.dsl import (HOME, At, Either, Op, Phase, Schedule, Step, check_shape, check_size, params,
                                     with_derived)


CHUNK = 1 << 17    # iterations per block of a Stream (whole cycles: chunk // m loop tuples)


def _vec(x, size, dtype=np.int32):
    """x as a read-only array of `size` elements of `dtype`: a read-only view of x where x is such an
    array already (the formulas on the step's index arrays mostly are; a view is a quarter of
    `broadcast_to`'s cost), else x broadcast."""
    if type(x) is np.ndarray and x.shape == (size,) and x.dtype == dtype:
        x = x.view()
        x.flags.writeable = False
        return x
    return np.broadcast_to(np.asarray(x, dtype=dtype), (size,))


def _level(lp, P, ix: dict, size: int):
    """(lo, count) of loop `lp` for each of the `size` tuples `ix` of its outer loops."""
    lo, hi = lp.bounds(P, SimpleNamespace(**ix))
    lo, hi = _vec(lo, size), _vec(hi, size)
    return lo, np.maximum(hi - lo + 1, 0).astype(np.int64)


def enumerate_loops(phase: Phase, P, box: list | None = None) -> dict[str, np.ndarray]:
    """All tuples of the phase's sequential loops, in lexicographic (= time) order.

    `box` receives (lo, count) per loop while every range is constant (a rectangular nest).
    """
    ix: dict[str, np.ndarray] = {}
    size = 1
    for lp in phase.loops:
        lo, count = _level(lp, P, ix, size)
        if box is not None:
            const = size == 0 or (lo.min() == lo.max() and count.min() == count.max())
            box.append((int(lo[0]), int(count[0])) if const and size else None)
        rep = np.repeat(np.arange(size), count)
        starts = np.cumsum(count) - count
        inner = np.arange(rep.size) - np.repeat(starts, count)
        ix = {name: val[rep] for name, val in ix.items()}
        ix[lp.name] = (np.repeat(lo, count) + inner).astype(np.int32)   # as the loop bounds
        size = rep.size
    return ix


@dataclass
class Witness:
    """An evaluated witness: alternatives (mask, phase name or None for HOME, indices)."""

    alternatives: list


def eval_witness(w, size, cond=None) -> Witness:
    cond = np.ones(size, dtype=bool) if cond is None else cond
    if w is HOME:
        return Witness([(cond, None, None)])
    if isinstance(w, At):
        return Witness([(cond, w.phase, {k: _vec(v, size) for k, v in w.idx.items()})])
    if isinstance(w, Either):
        c = _vec(w.cond, size, bool)
        return Witness(eval_witness(w.then, size, cond & c).alternatives
                       + eval_witness(w.other, size, cond & ~c).alternatives)
    raise TypeError(f"not a witness: {w!r}")


@dataclass
class PhaseTrace:
    phase: Phase
    start: int                 # first cycle of the phase
    tuples: int                # number of cycles (sequential loop tuples)
    index: dict                # loop indices and 'l', one element per iteration
    cycle: np.ndarray
    step: Step                 # as returned by the step function (numpy-valued fields)
    pe: np.ndarray
    active: np.ndarray         # guard: the op happens
    op: Op
    target: np.ndarray         # datum ids (-1: out of range or none)
    operands: list
    send: np.ndarray           # mask: a datum is sent (active or not)
    sent: np.ndarray           # id of the datum sent
    stored: np.ndarray         # id it is stored as at the receiver
    moves: np.ndarray          # the send moves the step's accumulator
    first: np.ndarray | None
    prev: Witness | None
    sources: list              # one Witness per operand
    send_source: Witness | None
    box: tuple | None = None   # (lo, count) per index, l last, when the nest is rectangular
    _lookup: tuple | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return self.cycle.size

    # the trace vocabulary (model/ring/vocabulary.py), one element per iteration, computed once

    @cached_property
    def busy(self) -> np.ndarray:
        return vocabulary.busy(self.active, self.send)

    @cached_property
    def node(self) -> np.ndarray:
        return vocabulary.node(self.active, self.moves) if self.op.accumulates else np.zeros(self.size, bool)

    @cached_property
    def starts(self) -> np.ndarray:
        return vocabulary.starts(self.active, self.first) if self.first is not None else np.zeros(self.size, bool)

    def locate(self, idx: dict) -> np.ndarray:
        """Positions of the iterations with indices `idx` (arrays); -1 where none exists."""
        names = self.phase.index_names
        if self.box is not None:          # rectangular: the position is a mixed-radix number
            size = len(next(iter(idx.values()))) if idx else 0
            pos = np.zeros(size, dtype=np.int32)
            ok = np.ones(size, dtype=bool)
            for name, (lo, count) in zip(names, self.box):
                c = np.asarray(idx[name], dtype=np.int32) - lo
                ok &= (c >= 0) & (c < count)
                pos *= count
                pos += c
            pos[~ok] = -1
            return pos
        if self._lookup is None:
            cols = [self.index[k] for k in names]
            lo = [c.min() if c.size else 0 for c in cols]
            span = [int(c.max() - l + 1) if c.size else 1 for c, l in zip(cols, lo)]
            key = np.zeros(self.size, dtype=np.int64)
            for c, l, s in zip(cols, lo, span):
                key = key * s + (c - l)
            order = np.argsort(key, kind="stable")
            self._lookup = (lo, span, key[order], order)
        lo, span, keys, order = self._lookup
        size = len(next(iter(idx.values()))) if idx else 0
        key = np.zeros(size, dtype=np.int64)
        ok = np.ones(size, dtype=bool)
        for name, l, s in zip(names, lo, span):
            c = idx[name] - l
            ok &= (c >= 0) & (c < s)
            key = key * s + np.clip(c, 0, s - 1)
        pos = np.searchsorted(keys, key)
        pos = np.clip(pos, 0, max(keys.size - 1, 0))
        found = ok & (keys.size > 0) & (keys[pos] == key if keys.size else False)
        return np.where(found, order[pos] if keys.size else -1, -1)


@dataclass
class Trace:
    schedule: Schedule
    n: int
    m: int
    P: SimpleNamespace
    layout: Layout
    phases: list
    cycles: int
    home: np.ndarray           # initial PE of every input datum id (0 for non-inputs)

    def phase(self, name: str) -> PhaseTrace:
        for pt in self.phases:
            if pt.phase.name == name:
                return pt
        raise KeyError(name)


def build_trace(schedule: Schedule, n: int, m: int, d: int | None = None) -> Trace:
    """Evaluate every phase of `schedule` for concrete n, m (and d, where its shape has d free; else d = n)."""
    check_size(n, m)
    return trace_of(schedule, params(n, m, d=check_shape(schedule, n, m, d)))


def trace_of(schedule: Schedule, P) -> Trace:
    """The trace for the parameters P as given, whether or not m divides n and d (k = n div m):
    `build_trace` checks the sizes; this is also how a condition's necessity is shown."""
    n, m = P.n, P.m
    layout = Layout(schedule.problem, n, P.d, sizes(schedule, P))
    phases, start, slots = [], 0, schedule.slots
    for k, phase in enumerate(schedule.phases):
        if k and slots[k] != slots[k - 1]:
            start += max(pt.tuples for pt, s in zip(phases, slots) if s == slots[k - 1])
        phases.append(_phase_trace(phase, P, m, layout, start))
    end = start + max((pt.tuples for pt, s in zip(phases, slots) if s == slots[-1]), default=0)
    return Trace(schedule, n, m, P, layout, phases, end, homes(schedule, P, layout))


def slot_starts(schedule: Schedule, tuples: list) -> tuple[list, int]:
    """(each phase's first cycle, the cycles of the whole schedule) given each phase's cycles: a
    lock-step group (`Schedule.slots`) starts its members together and lasts as its longest."""
    slots, length = schedule.slots, {}
    for s, t in zip(slots, tuples):
        length[s] = max(length.get(s, 0), t)
    begin = {s: sum(length[x] for x in range(s)) for s in length}
    return [begin[s] for s in slots], sum(length.values())


def sizes(schedule: Schedule, P) -> dict:
    """{name: value} of every size an array's dimension may name at P: the parameters and the
    schedule's derived parameters."""
    return vars(with_derived(schedule.derived, P))


def homes(schedule: Schedule, P, layout: Layout) -> np.ndarray:
    """The initial PE of every input datum id (0 for the other data)."""
    home = np.zeros(layout.size, dtype=np.int64)
    for a in schedule.problem.inputs:
        ext = layout.extents[a.name]
        grids = np.meshgrid(*[np.arange(1, e + 1) for e in ext], indexing="ij")
        ref = a[tuple(g.ravel() for g in grids)]
        ids = layout.ids(ref, grids[0].size)
        home[ids] = _vec(schedule.home(P, ref), ids.size)
    return home


def _phase_trace(phase, P, m, layout, start) -> PhaseTrace:
    seq, tuples, box, index = indexed(phase, P, m)
    return _iterations(phase, P, m, layout, seq, np.arange(tuples), start, tuples, box, index)


_LAST: list = [None]      # `indexed`'s last (key, answer), read and set as one (threads)


def indexed(phase: Phase, P, m: int) -> tuple:
    """(the phase's loop tuples by `enumerate_loops`, their number, (lo, count) per index where the
    nest is rectangular else None, the index record a step sees: each loop index and l, one element
    per iteration on PE 1, ..., m), its arrays read-only. The last answer is kept, keyed by the
    loops and the sizes (ints), so the forms of a phase's step (`dsl.split_forms`: the same loops),
    evaluated one after another at the same sizes, share it and, through it, one run of the step
    (`dsl._form_step`)."""
    values = tuple(vars(P).items())
    key = (phase.loops, m, values) if all(type(v) is int for _, v in values) else None
    seen = _LAST[0]
    if key is not None and seen is not None and seen[0] == key:
        seq, tuples, box, index = seen[1]
        return dict(seq), tuples, box, dict(index)     # the dicts the caller's own, the arrays shared
    box: list = []
    seq = enumerate_loops(phase, P, box)
    box = tuple(box) + ((1, m),) if all(b is not None for b in box) else None
    tuples = len(next(iter(seq.values()))) if seq else 1
    index = {k: np.repeat(v, m) for k, v in seq.items()}
    index["l"] = np.tile(np.arange(1, m + 1, dtype=np.int32), tuples)
    seq, index = ({k: v if v.base is None else v.copy() for k, v in d.items()} for d in (seq, index))
    for v in (*seq.values(), *index.values()):
        v.flags.writeable = False        # `dsl._form_step` keys its answer by these very arrays
    if key is not None:
        _LAST[0] = key, (dict(seq), tuples, box, dict(index))
    return seq, tuples, box, index


def _iterations(phase, P, m, layout, seq, offsets, start, tuples, box=None, index=None) -> PhaseTrace:
    """The iterations of the loop tuples `seq`, which are tuples `offsets` (cycles start + offsets)
    of the phase's `tuples` (`index`: their index record where `indexed` built it)."""
    size = offsets.size * m
    if index is None:
        index = {k: np.repeat(v, m) for k, v in seq.items()}
        index["l"] = np.tile(np.arange(1, m + 1, dtype=np.int32), offsets.size)
    cycle = np.repeat(start + offsets.astype(np.int64), m)
    step = phase.step(P, SimpleNamespace(**index))
    if not isinstance(step, Step):
        raise TypeError(f"phase {phase.name}: step returned {type(step).__name__}, not Step")
    known: dict = {}

    def ids(ref):                   # a datum named twice with the same index values is looked up once
        key = (ref.array.name, tuple(map(id, ref.idx)))
        if key not in known:
            known[key] = layout.ids(ref, size)
        return known[key]

    target = ids(step.target) if step.target is not None else np.full(size, -1)
    operands = [ids(r) for r in step.operands]
    if step.send is not None:
        send = _vec(step.send.when, size, bool).copy()
        sent = ids(step.send.datum)
        stored = ids(step.send.stored)
        copy = _vec(step.send.copy, size, bool)
        moves = vocabulary.moves(send, copy, sent == target) if step.op.accumulates else np.zeros(size, bool)
        send_source = eval_witness(step.send.source, size) if step.send.source is not None else None
    else:
        send = np.zeros(size, dtype=bool)
        sent = stored = np.full(size, -1)
        moves = np.zeros(size, dtype=bool)
        send_source = None
    first = _vec(step.first, size, bool) if step.first is not None else None
    prev = eval_witness(step.prev, size) if step.prev is not None else None
    sources = [eval_witness(w, size) for w in step.sources]
    return PhaseTrace(phase, start, tuples, index, cycle, step, _vec(step.pe, size),
                      _vec(step.guard, size, bool), step.op, target, operands, send, sent,
                      stored, moves, first, prev, sources, send_source, box)


# ----------------------------------------------------------------------------- lazily, by blocks


def _blocks(loops, P, ix: dict, size: int, most: int):
    """The tuples of `loops` inside each of the `size` outer tuples `ix`, in lexicographic order, as
    (indices, count) blocks of at most `most` tuples: one block of the outer loops at a time, so no
    level ever holds more than `most` tuples. A constant range is unravelled by mixed radix."""
    if not loops:
        yield ix, size
        return
    lp = loops[0]
    lo, count = _level(lp, P, ix, size)
    ends = np.cumsum(count)
    total = int(ends[-1]) if size else 0
    radix = int(count[0]) if size and count.min() == count.max() and lo.min() == lo.max() else 0
    for a in range(0, total, most):
        pos = np.arange(a, min(a + most, total), dtype=np.int64)
        if radix:
            rep = pos // radix
            inner = pos - rep * radix
        else:
            rep = np.searchsorted(ends, pos, side="right")
            inner = pos - (ends[rep] - count[rep])
        sub = {k: v[rep] for k, v in ix.items()}
        sub[lp.name] = (lo[rep] + inner).astype(np.int32)
        yield from _blocks(loops[1:], P, sub, pos.size, most)


def count_tuples(phase: Phase, P) -> int:
    """The number of the phase's loop tuples (its cycles), without enumerating the innermost loop."""
    if not phase.loops:
        return 1
    total = 0
    for ix, size in _blocks(phase.loops[:-1], P, {}, 1, CHUNK):
        total += int(_level(phase.loops[-1], P, ix, size)[1].sum())
    return total


def _every_step(phase: Phase, P, m: int):
    """(loop tuples, the step evaluated at every loop tuple on every PE, its size, the index record
    it saw) by enumeration."""
    _, tuples, _, index = indexed(phase, P, m)
    return tuples, phase.step(P, SimpleNamespace(**index)), tuples * m, index


def phase_tally(phase: Phase, P, m: int) -> tuple[dict, dict | None]:
    """({"cycles": loop tuples, op kind: iterations whose op happens, "MOVE": also those that only
    forward} of one phase at sizes P, as the ring machine tallies them; `active_per_step`, or None
    where the phase has no loop), from one enumeration: the counts and the per-PE forms are checked
    against both at the same sizes."""
    tuples, step, size, index = _every_step(phase, P, m)
    active = _vec(step.guard, size, bool)
    return _tallied(tuples, step, size, active), _per_step(phase, step, m, index, active) if phase.loops else None


def _tallied(tuples: int, step, size: int, active) -> dict:
    send = _vec(step.send.when, size, bool) if step.send is not None else np.zeros(size, bool)
    out = {"cycles": tuples, **{op.value: 0 for op in Op}}
    out[step.op.value] += int(np.count_nonzero(active))
    out["MOVE"] += int(np.count_nonzero(vocabulary.forwards(active, send)))
    return out


def active_per_pe(phase: Phase, P, m: int) -> list[int]:
    """The iterations of one phase whose op happens, on PE 1, ..., m, at sizes P, by enumeration (the
    step's guard and PE at every iteration; nothing else of the trace is built)."""
    _, step, size, _ = _every_step(phase, P, m)
    pe = _vec(step.pe, size, np.int64)
    return np.bincount(pe[_vec(step.guard, size, bool)], minlength=m + 1)[1:m + 1].tolist()


def active_per_step(phase: Phase, P, m: int) -> dict[int, list[int]]:
    """{value of the phase's outermost loop (its ring step): [iterations whose op happens on PE 1,
    ..., m in that step]} at sizes P, by enumeration (as `active_per_pe`)."""
    _, step, size, index = _every_step(phase, P, m)
    return _per_step(phase, step, m, index, _vec(step.guard, size, bool))


def _per_step(phase: Phase, step, m: int, index: dict, active) -> dict[int, list[int]]:
    pe, outer = _vec(step.pe, active.size, np.int64), index[phase.loops[0].name]
    return {int(s): np.bincount(pe[active & (outer == s)], minlength=m + 1)[1:m + 1].tolist()
            for s in np.unique(outer)}


def idle_cycles(schedule: Schedule, n: int, m: int, d: int | None = None) -> int:
    """The cycles of the ring at sizes n, m (d) when a PE with nothing to do in a ring step does not
    hold the others back: a lock-step group whose phases' outermost loop is a ring step
    (`Loop(..., ring_step=True)`) takes, per step, the active ops of its busiest PE (each PE runs
    its own active iterations of the step one per cycle; the step ends when the last is done);
    any other group its lock-step cycles. By enumeration."""
    P = params(n, m, d=check_shape(schedule, n, m, d))
    P = with_derived(schedule.derived, P) if schedule.derived else P
    total = 0
    for members in slot_members(schedule).values():
        if all(p.loops and p.loops[0].ring_step for p in members):
            busy: dict = {}
            for p in members:
                for s, row in active_per_step(p, P, m).items():
                    busy[s] = [a + b for a, b in zip(busy.get(s, [0] * m), row)]
            total += sum(max(row) for row in busy.values())
        else:
            total += max(count_tuples(p, P) for p in members)
    return total


def idle_violations(schedule: Schedule, n: int, m: int, d: int | None = None) -> list[str]:
    """Where the idle-PE mode (`idle_cycles`) would not run the schedule as written: a datum read on
    a PE in a ring step in which it arrived there (sent by the previous PE in that step: within a
    step each PE keeps its own pace, so a datum may come late). [] where every datum a step reads on
    a PE was there before the step (or is made there)."""
    trace = build_trace(schedule, n, m, d)
    by_slot: dict = {}
    for pt, slot in zip(trace.phases, schedule.slots):
        by_slot.setdefault(slot, []).append(pt)
    out = []
    for pts in by_slot.values():
        if not all(pt.phase.loops and pt.phase.loops[0].ring_step for pt in pts):
            continue
        width = max(int(np.max(pt.index[pt.phase.loops[0].name], initial=0)) for pt in pts) + 2
        def key(ids, pe, step):
            return (np.asarray(ids, np.int64) * (m + 2) + np.asarray(pe, np.int64)) * width + np.asarray(step, np.int64)
        arrived = np.concatenate([key(pt.stored[pt.send], np.asarray(pt.pe)[pt.send] % m + 1,
                                      pt.index[pt.phase.loops[0].name][pt.send]) for pt in pts] + [np.zeros(0, np.int64)])
        for pt in pts:
            on = pt.active
            step = pt.index[pt.phase.loops[0].name]
            reads = list(pt.operands) + ([pt.target] if pt.op.accumulates else [])   # a sum's earlier value too
            for ids in reads:
                ok = on & (np.asarray(ids) >= 0)
                bad = np.isin(key(np.asarray(ids)[ok], np.asarray(pt.pe)[ok], step[ok]), arrived)
                if bad.any():
                    at = np.flatnonzero(ok)[np.argmax(bad)]
                    out.append(f"phase {pt.phase.name}: PE {int(pt.pe[at])} reads in ring step {int(step[at])} a datum "
                               f"that arrives there in the same step")
                    break
    return out


def slot_members(schedule: Schedule) -> dict:
    """{time slot: its phases} (a lock-step group shares one slot: `Schedule.slots`)."""
    out: dict = {}
    for p, s in zip(schedule.phases, schedule.slots):
        out.setdefault(s, []).append(p)
    return out


class Stream:
    """A schedule for concrete n, m (and d) read lazily: each phase in blocks of about `chunk`
    iterations (whole cycles, in time order), or only the cycles asked for. Memory: one block."""

    def __init__(self, schedule: Schedule, n: int, m: int, d: int | None = None, chunk: int = CHUNK):
        check_size(n, m)
        self.schedule, self.n, self.m = schedule, n, m
        self.P = params(n, m, d=check_shape(schedule, n, m, d))
        self.layout = Layout(schedule.problem, n, self.P.d, sizes(self.schedule, self.P))
        self.per_block = max(chunk // m, 1)

    @cached_property
    def tuples(self) -> list[int]:
        """Each phase's number of cycles (counted when first asked)."""
        return [count_tuples(phase, self.P) for phase in self.schedule.phases]

    @cached_property
    def starts(self) -> list[int]:
        return slot_starts(self.schedule, self.tuples)[0]

    @property
    def cycles(self) -> int:
        return slot_starts(self.schedule, self.tuples)[1]

    @cached_property
    def home(self) -> np.ndarray:
        return homes(self.schedule, self.P, self.layout)

    def _seq(self, k: int):
        """(indices, offsets) blocks of phase k's loop tuples."""
        first = 0
        for seq, count in _blocks(self.schedule.phases[k].loops, self.P, {}, 1, self.per_block):
            yield seq, np.arange(first, first + count)
            first += count

    def blocks(self, k: int) -> Iterator[PhaseTrace]:
        """Phase k's iterations, a block of whole cycles at a time, in time order."""
        phase = self.schedule.phases[k]
        for seq, offsets in self._seq(k):
            yield _iterations(phase, self.P, self.m, self.layout, seq, offsets, self.starts[k],
                              self.tuples[k])

    def phase_of(self, cycle: int) -> int:
        """The index of the phase that runs in `cycle` (of a lock-step group: its first member
        that does)."""
        return min((k for k, s in enumerate(self.starts) if s <= cycle < s + self.tuples[k]),
                   default=max(k for k, s in enumerate(self.starts) if s <= cycle and self.tuples[k]))

    def window(self, cycles) -> Trace:
        """The trace of the given cycles only (each phase's iterations in them), at any size."""
        want = np.unique(np.asarray(list(cycles), dtype=np.int64))
        phases = []
        for k, phase in enumerate(self.schedule.phases):
            start = self.starts[k]
            sel = want[(want >= start) & (want < start + self.tuples[k])] - start
            seqs, offs = [], []
            for seq, offsets in (self._seq(k) if sel.size else ()):
                take = (sel[(sel >= offsets[0]) & (sel <= offsets[-1])] - offsets[0] if offsets.size
                        else sel[:0])
                if take.size:
                    seqs.append({name: v[take] for name, v in seq.items()})
                    offs.append(offsets[take])
                if offsets.size and offsets[-1] >= sel[-1]:
                    break
            seq = {lp.name: np.concatenate([s[lp.name] for s in seqs]) if seqs else np.zeros(0, np.int32)
                   for lp in phase.loops}
            offsets = np.concatenate(offs) if offs else np.zeros(0, np.int64)
            phases.append(_iterations(phase, self.P, self.m, self.layout, seq, offsets, start,
                                      self.tuples[k]))
        return Trace(self.schedule, self.n, self.m, self.P, self.layout, phases, self.cycles, self.home)
