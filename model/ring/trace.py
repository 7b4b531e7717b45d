"""Concrete evaluation of a schedule for given n, m: every iteration as numpy arrays.

The same step functions the prover reads symbolically are called here with numpy int32 arrays (one
element per iteration), so a bounded check is a handful of vectorized passes, not a Python loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from types import SimpleNamespace

import numpy as np

from ringproof.model.ring import vocabulary
from ringproof.model.ring.layout import Layout
from ringproof.schedules.dsl import HOME, At, Either, Op, Phase, Schedule, Step, check_shape, check_size, params


def _vec(x, size, dtype=np.int32):
    return np.broadcast_to(np.asarray(x, dtype=dtype), (size,))


def enumerate_loops(phase: Phase, P, box: list | None = None) -> dict[str, np.ndarray]:
    """All tuples of the phase's sequential loops, in lexicographic (= time) order.

    `box` receives (lo, count) per loop while every range is constant (a rectangular nest).
    """
    ix: dict[str, np.ndarray] = {}
    size = 1
    for lp in phase.loops:
        lo, hi = lp.bounds(P, SimpleNamespace(**ix))
        lo, hi = _vec(lo, size), _vec(hi, size)
        if box is not None:
            const = size == 0 or (lo.min() == lo.max() and hi.min() == hi.max())
            box.append((int(lo[0]), int(max(hi[0] - lo[0] + 1, 0))) if const and size else None)
        count = np.maximum(hi - lo + 1, 0)
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
    box: list | None = None    # (lo, count) per index, l last, when the nest is rectangular
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
    """Evaluate every phase of `schedule` for concrete n, m (and d; a square schedule has d = n)."""
    check_size(n, m)
    return trace_of(schedule, params(n, m, d=check_shape(schedule, n, m, d)))


def trace_of(schedule: Schedule, P) -> Trace:
    """The trace for the parameters P as given, whether or not m divides n and d (k = n div m):
    `build_trace` checks the sizes; this is also how a condition's necessity is shown."""
    n, m = P.n, P.m
    layout = Layout(schedule.problem, n, P.d)
    phases, start = [], 0
    for phase in schedule.phases:
        pt = _phase_trace(phase, P, m, layout, start)
        phases.append(pt)
        start += pt.tuples
    home = np.zeros(layout.size, dtype=np.int64)
    for a in schedule.problem.inputs:
        ext = layout.extents[a.name]
        grids = np.meshgrid(*[np.arange(1, e + 1) for e in ext], indexing="ij")
        ref = a[tuple(g.ravel() for g in grids)]
        ids = layout.ids(ref, grids[0].size)
        home[ids] = _vec(schedule.home(P, ref), ids.size)
    return Trace(schedule, n, m, P, layout, phases, start, home)


def _phase_trace(phase, P, m, layout, start) -> PhaseTrace:
    box: list = []
    seq = enumerate_loops(phase, P, box)
    box = box + [(1, m)] if all(b is not None for b in box) else None
    tuples = len(next(iter(seq.values()))) if seq else 1
    size = tuples * m
    index = {k: np.repeat(v, m) for k, v in seq.items()}
    index["l"] = np.tile(np.arange(1, m + 1, dtype=np.int32), tuples)
    cycle = start + np.repeat(np.arange(tuples, dtype=np.int64), m)
    step = phase.step(P, SimpleNamespace(**index))
    if not isinstance(step, Step):
        raise TypeError(f"phase {phase.name}: step returned {type(step).__name__}, not Step")
    target = layout.ids(step.target, size) if step.target is not None else np.full(size, -1)
    operands = [layout.ids(r, size) for r in step.operands]
    if step.send is not None:
        send = _vec(step.send.when, size, bool).copy()
        sent = layout.ids(step.send.datum, size)
        stored = layout.ids(step.send.stored, size)
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
