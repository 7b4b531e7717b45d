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
        self.history = None           # in a lock-step group: [(ids, cycles, running max after them)]
        self.renamed = None           # stored id -> id of the datum sent, applied when the phase ends

    def live(self) -> None:
        """From now until `end`, operands are read as they are when read (the phases of a
        lock-step group, which share cycles), not as they were when the phase began; and a running
        max keeps its history, so a rescaled sum read in the group reads the max of its cycle."""
        self.base = self.val
        if self.history is None:      # each member of the group goes live: one history for all
            self.history = []

    def block(self, pt) -> None:
        """Execute a block of a phase's iterations (in cycle order, after the phase's earlier ones)."""
        a = slice(None) if pt.active.all() else np.flatnonzero(pt.active)
        if pt.target[a].size:
            ops = [self.base[o[a]] for o in pt.operands]
            tgt = pt.target[a]
            if pt.op is Op.EAC and len(ops) > 1:             # exp(a − b): b as of this cycle
                ops[1] = self._as_of(pt.operands[1][a], pt.cycle[a], ops[1])
            if pt.op is Op.MAX:
                self._running_max(tgt, pt.starts[a], ops[0], pt.cycle[a])
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

    def _running_max(self, tgt, first, term, cycles) -> None:
        """Keep the largest term of each target (cycle order: from its last `first` term on); in a
        lock-step group, also the running value after each term (`history`)."""
        keep = self._restart(tgt, first, -np.inf)
        tgt, term, cycles = tgt[keep], term[keep], cycles[keep]
        cur = self.val[tgt]
        self.val[tgt[np.isnan(cur)]] = -np.inf               # a max never started starts from −∞
        if self.history is not None and tgt.size:
            order = np.argsort(tgt, kind="stable")           # by target, each in cycle order
            t, v = tgt[order], term[order]
            heads = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
            run = np.empty_like(v)
            for lo, hi in zip(heads, np.r_[heads[1:], t.size]):
                with np.errstate(invalid="ignore"):
                    run[lo:hi] = np.maximum.accumulate(np.r_[self.val[t[lo]], v[lo:hi]])[1:]
            self.history.append((t, cycles[order], run))
        with np.errstate(invalid="ignore"):                # a datum never computed (NaN) stays NaN
            np.maximum.at(self.val, tgt, term)

    def _as_of(self, ids, cycles, now):
        """The values of running maxes `ids` as they were after their last term before `cycles`
        (the group's history), else as they are now."""
        if not self.history:
            return now
        hid, hcyc, hval = (np.concatenate(x) for x in zip(*self.history))
        span = int(max(hcyc.max(), cycles.max())) + 2
        keys = hid.astype(np.int64) * span + hcyc
        order = np.argsort(keys, kind="stable")
        keys, hid, hval = keys[order], hid[order], hval[order]
        j = np.searchsorted(keys, ids.astype(np.int64) * span + cycles, side="left") - 1
        found = (j >= 0) & (hid[np.maximum(j, 0)] == ids)
        return np.where(found, hval[np.maximum(j, 0)], now)

    def _online(self, tgt, first, ops) -> None:
        """exp(a − b)[·c] terms into accumulators kept relative to b: each target's terms, in cycle
        order, in runs that read one b (a folded block); at each run the accumulator is rescaled by
        exp(ref − b) to that b, then the run's terms are added."""
        keep = self._restart(tgt, first, 0.0, restart_ref=True)
        tgt, ops = tgt[keep], [o[keep] for o in ops]
        if tgt.size == 0:
            return
        order = np.argsort(tgt, kind="stable")               # by target, each in cycle order
        t, b, term = tgt[order], ops[1][order], self._exp(ops)[order]
        new = np.r_[True, (t[1:] != t[:-1]) | ~((b[1:] == b[:-1]) | (np.isnan(b[1:]) & np.isnan(b[:-1])))]
        run = np.cumsum(new) - 1
        starts = np.flatnonzero(new)
        rt, rb = t[starts], b[starts]
        sums = np.bincount(run, weights=term, minlength=starts.size)
        rank = np.arange(starts.size) - np.flatnonzero(np.r_[True, rt[1:] != rt[:-1]]).repeat(
            np.diff(np.r_[np.flatnonzero(np.r_[True, rt[1:] != rt[:-1]]), starts.size]))
        for k in range(int(rank.max()) + 1):               # the k-th block of every target at once
            r = np.flatnonzero(rank == k)
            u = rt[r]
            acc, ref = self.val[u], self.ref[u]
            held = ~np.isnan(acc) & ~np.isnan(ref)
            acc = np.where(held, acc * np.exp(self.scale * (np.where(held, ref, 0.0) - rb[r])), 0.0)   # the rescale
            self.val[u] = acc + sums[r]
            self.ref[u] = rb[r]

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
    (`ringproof.model.ring.trace.build_trace`); `scale`: see `Numerics`. The phases of a lock-step
    group run as the ring model runs them (`machine.computed`): one after another, a phase would
    read values its partners make in later cycles."""
    schedule = trace.schedule
    if any(p.group is not None for p in schedule.phases):
        from ringproof.model.ring.machine import computed
        return computed(schedule, trace.n, trace.m, inputs, trace.P.d, scale).output(schedule.problem)
    num = Numerics(trace.layout, inputs, scale, trace.schedule.problem)
    for pt in trace.phases:
        num.block(pt)
        num.end()
    return num.output(trace.schedule.problem)


TOLERANCE = 1e-9     # the relative error a valid run may have (RunResult.ok)


def relative_error(y: np.ndarray, ref: np.ndarray) -> float:
    """max |y − ref| / max |ref|; inf if not finite."""
    err = np.abs(y - ref).max() / np.abs(ref).max()
    return float(err) if np.isfinite(err) else float("inf")


def first_difference(name: str, y: np.ndarray, ref: np.ndarray) -> dict | None:
    """The first entry of output `name` (row-major; indices from 1, as the schedules write them)
    that is not computed or differs from the reference by more than TOLERANCE · max |ref|:
    {"output", "index", "got" (None: never computed), "expected"}; None if there is none."""
    scale = np.abs(ref).max() or 1.0
    with np.errstate(invalid="ignore"):
        wrong = ~(np.abs(y - ref) <= TOLERANCE * scale)       # NaN (never computed) counts as wrong
    if not wrong.any():
        return None
    at = np.unravel_index(int(np.argmax(wrong)), y.shape)
    got = float(y[at])
    return {"output": name, "index": [int(i) + 1 for i in at], "got": None if np.isnan(got) else got,
            "expected": float(ref[at])}


def describe_difference(diff: dict) -> str:
    """`first_difference`'s answer for people: `w1[2, 1] never computed (numpy: 0.53)`."""
    where = f"{diff['output']}[{', '.join(map(str, diff['index']))}]"
    got = "never computed" if diff["got"] is None else f"= {diff['got']:.6g}"
    return f"{where} {got} (numpy: {diff['expected']:.6g})"
