"""What the ring computes: its ops executed on float64 values, a phase at a time and, within a phase,
a block of iterations at a time in cycle order (a whole phase is one block), so memory is one value
per datum whatever the number of iterations.

Semantics (those of the ring model since its first version): an op reads its operands as they were
when its phase began (in a lock-step group of phases: as they are, `live`, members read after the
members whose results they read); a sum adds its terms in cycle order, and a `first` term restarts it
from 0 (a sum never started starts from 0); a MAX keeps the largest term (from −∞); a DIV or NORM
assigns its target; a copy stored under another name takes the value its datum has when the phase
ends.

Online softmax (`ringproof.schedules.dsl.rescaled`): a rescaled accumulator of exp(a − b)[·c] terms
keeps the reference b its value is relative to (`ref`); a term first rescales it by exp(ref − b) to
the b it reads (once per block of terms that read one b: per folded block), and NORM brings its
numerator and denominator to one reference before it divides.
"""

from __future__ import annotations

import numpy as np

from ringproof.model.ring.layout import Layout
from ringproof.schedules.dsl import Op, Problem


class Numerics:
    """The values of every datum (NaN until computed), updated block by block.

    `scale` multiplies w1 where it is exponentiated (EAC, DIV): 1 is the paper's phase 1, 1/√d the
    usual scaled dot product."""

    def __init__(self, layout: Layout, inputs: dict, scale: float = 1.0, problem: Problem | None = None):
        self.layout, self.scale = layout, scale
        self.online = {e.target.name for e in (problem.equations if problem else ()) if e.rescaled}
        self.val = np.full(layout.size, np.nan)
        self.ref = np.full(layout.size, np.nan)       # the reference of an online accumulator
        for name, arr in inputs.items():
            off = layout.offset[name]
            self.val[off:off + arr.size] = np.asarray(arr, dtype=float).ravel()
        self.begin()

    def begin(self) -> None:
        """A phase begins: its operands are read from the values as they are now."""
        self.base = self.val.copy()
        self.renamed = None           # stored id -> id of the datum sent, applied when the phase ends

    def live(self) -> None:
        """From now until `end`, operands are read as they are when read (the phases of a
        lock-step group, which share cycles), not as they were when the phase began."""
        self.base = self.val

    def block(self, pt) -> None:
        """Execute a block of a phase's iterations (in cycle order, after the phase's earlier ones)."""
        a = slice(None) if pt.active.all() else np.flatnonzero(pt.active)
        if pt.target[a].size:
            ops = [self.base[o[a]] for o in pt.operands]
            tgt = pt.target[a]
            if pt.op is Op.MAX:
                self._running_max(tgt, pt.starts[a], ops[0])
            elif pt.op is Op.EAC and pt.step.target.array.name in self.online:
                self._online(tgt, pt.starts[a], ops)
            elif pt.op.accumulates:
                term = ops[0] * ops[1] if pt.op is Op.MAC else self._exp(ops)
                self._accumulate(tgt, pt.starts[a], term)
            elif pt.op is Op.DIV:
                self.val[tgt] = np.exp(self.scale * ops[0]) / ops[1]
            elif pt.op is Op.NORM:
                refs = [self.ref[o[a]] for o in pt.operands]
                shift = np.nan_to_num(refs[0] - refs[1]) if not np.isnan(refs[0]).all() else 0.0
                self.val[tgt] = ops[0] / ops[1] * np.exp(self.scale * shift)
        s = np.flatnonzero(pt.send & (pt.stored != pt.sent))
        if s.size:
            if self.renamed is None:
                self.renamed = np.full(self.layout.size, -1, dtype=np.int64)
            self.renamed[pt.stored[s]] = pt.sent[s]

    def end(self) -> None:
        """The phase ends: copies stored under another name take their datum's value."""
        if self.renamed is not None:
            ids = np.flatnonzero(self.renamed >= 0)
            self.val[ids] = self.val[self.renamed[ids]]
            self.ref[ids] = self.ref[self.renamed[ids]]
        self.begin()

    def output(self, problem: Problem, array=None) -> np.ndarray:
        """The values of `array` (default: the problem's first output)."""
        name = (array or problem.output).name
        off, shape = self.layout.offset[name], self.layout.extents[name]
        return self.val[off:off + int(np.prod(shape))].reshape(shape)

    def _exp(self, ops):
        """exp(a), exp(a − b) or exp(a − b)·c (b read as any operand)."""
        return np.exp(self.scale * (ops[0] - (ops[1] if len(ops) > 1 else 0.0))) * (ops[2] if len(ops) > 2 else 1.0)

    def _running_max(self, tgt, first, term) -> None:
        """Keep the largest term of each target (cycle order: from its last `first` term on)."""
        keep = self._restart(tgt, first, -np.inf)
        tgt, term = tgt[keep], term[keep]
        cur = self.val[tgt]
        self.val[tgt[np.isnan(cur)]] = -np.inf               # a max never started starts from −∞
        with np.errstate(invalid="ignore"):                # a datum never computed (NaN) stays NaN
            np.maximum.at(self.val, tgt, term)

    def _online(self, tgt, first, ops) -> None:
        """exp(a − b)[·c] terms into accumulators kept relative to b: rescale each target once to
        the b its terms read, then add them (a target whose terms read several b: term by term)."""
        keep = self._restart(tgt, first, 0.0, restart_ref=True)
        tgt, ops = tgt[keep], [o[keep] for o in ops]
        if tgt.size == 0:
            return
        b = ops[1]
        new = np.full(self.val.size, np.nan)
        new[tgt] = b
        if tgt.size > 1 and not np.array_equal(new[tgt], b, equal_nan=True):   # several b for a target
            for i in range(tgt.size):
                self._online(tgt[i:i + 1], np.zeros(1, dtype=bool), [o[i:i + 1] for o in ops])
            return
        t = np.unique(tgt)
        old = self.ref[t]
        held = ~np.isnan(old) & ~np.isnan(self.val[t])
        self.val[t[held]] *= np.exp(self.scale * (old[held] - new[t[held]]))     # the rescale
        self.val[t[~held]] = np.where(np.isnan(self.val[t[~held]]), 0.0, self.val[t[~held]])
        self.ref[t] = new[t]
        np.add.at(self.val, tgt, self._exp(ops))

    def _restart(self, tgt, first, start: float, restart_ref: bool = False) -> np.ndarray:
        """The terms that count (from each target's last `first` term on); those targets restart
        from `start`."""
        keep = np.ones(tgt.size, dtype=bool)
        if first.any():
            f = np.flatnonzero(first)
            last = np.full(self.val.size, -1, dtype=np.int64)
            np.maximum.at(last, tgt[f], f)
            keep = np.arange(tgt.size) >= last[tgt]
            ids = np.unique(tgt[f])
            self.val[ids] = start
            if restart_ref:
                self.ref[ids] = np.nan
        return keep

    def _accumulate(self, tgt, first, term) -> None:
        """Add the block's terms (cycle order) to their sums; only the terms from a target's last
        `first` term on count, and that target restarts from 0."""
        lo = int(tgt.min())
        span = int(tgt.max()) - lo + 1
        if lo >= 0 and span <= 4 * tgt.size:              # the block's targets, densely
            keys, rel = slice(lo, lo + span), tgt - lo
        else:
            keys, rel = np.unique(tgt, return_inverse=True)
            span = keys.size
        seg = self.val[keys]
        if first.any():
            f = np.flatnonzero(first)
            last_first = np.full(span, -1, dtype=np.int64)
            np.maximum.at(last_first, rel[f], f)
            keep = np.arange(rel.size) >= last_first[rel]
            seg[rel[f]] = 0.0
            if not keep.all():
                rel, term = rel[keep], term[keep]
        nan = np.isnan(seg)
        if nan.any():                                      # a sum never started starts from 0
            seg[nan & (np.bincount(rel, minlength=span) > 0)] = 0.0
        seg += np.bincount(rel, weights=term, minlength=span)
        self.val[keys] = seg


def execute(trace, inputs: dict, scale: float = 1.0) -> np.ndarray:
    """The output the ring computes from `inputs` (name -> array) on a whole trace
    (`ringproof.model.ring.trace.build_trace`); `scale`: see `Numerics`."""
    num = Numerics(trace.layout, inputs, scale, trace.schedule.problem)
    for pt in trace.phases:
        num.block(pt)
        num.end()
    return num.output(trace.schedule.problem)


def relative_error(y: np.ndarray, ref: np.ndarray) -> float:
    """max |y − ref| / max |ref|; inf if not finite."""
    err = np.abs(y - ref).max() / np.abs(ref).max()
    return float(err) if np.isfinite(err) else float("inf")
