"""The cycle-level ring machine: runs a schedule for concrete n, m and checks it.

Rules (docs/machine.md): PEs 1..m, one link l -> l mod m + 1 carrying one datum per cycle, one op
per PE per cycle. A datum is usable at PE p in cycle t if it is an input placed on p, or it arrived
at p (sent at t-1 or earlier), or p produced its final value before t. Sending a step's own
accumulator moves it; anything else is copied. An accumulator's contributions must follow it: each
one on the PE where the previous one left it; its value is readable only once final (but for the
reference of a rescaled online-softmax sum, which may be read running: on the PE its sum is left on,
after its first term).

This model uses no witness: it is the independent oracle the prover's verdicts are checked against.
Inputs are random; y is compared with numpy attention (`ringproof.model.ring.reference`).

It streams: the iterations are read a block of whole cycles at a time in time order
(`trace.Stream`), and between blocks only per-datum records stay (`sums`, `holds`, `numerics`), so
memory is O(data · m + block), not O(iterations). Whether a value read is final, and whether a copy
was of a finished sum, is known only once the sum's last node has been seen. So each phase is read
once for everything whose data are already settled (no phase from this one on adds to them): its
running sums, its numerics, its holds and reads; a phase that copies or reads the very sums it
accumulates is read a second time for those reads alone, once its sums are finished. A schedule that
reads a sum a later phase still adds to is checked in two passes over all phases instead (first
every running sum, then everything else). The violations are those of the whole-trace checker, the
same iterations included (tests/helpers/reference_machine.py): of each rule family the first one, in the
order the whole trace sorts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ringproof.model.ring import vocabulary
from ringproof.model.ring.holds import Holds
from ringproof.model.ring.limits import check_simulable
from ringproof.model.ring.numerics import TOLERANCE, Numerics, first_difference, relative_error
from ringproof.model.ring.reference import empty_sums, random_inputs, reference_outputs
from ringproof.model.ring.rules import RULES, assume
from ringproof.model.ring.sums import RunningSums
from ringproof.model.ring.trace import CHUNK, Stream, Trace
from ringproof.schedules.dsl import ALWAYS_COUNTED, ARITHMETIC, Op, Schedule, rescaled

assume("the ring simulator (model/ring/machine.py)", link_capacity=1, persists=True)


@dataclass(frozen=True)
class Violation:
    """One broken machine rule, with the iterations involved (phase, loop indices, PE, cycle)."""

    rule: str
    message: str
    iterations: tuple = ()

    def __str__(self):
        return f"{self.rule}: {self.message}"


@dataclass
class RunResult:
    n: int
    m: int
    cycles: int
    ops: dict
    utilization: float
    max_rel_error: float
    violations: list = field(default_factory=list)
    difference: dict | None = None      # the first wrong output entry (`numerics.first_difference`)

    @property
    def ok(self) -> bool:
        return not self.violations and self.max_rel_error <= TOLERANCE


def iteration(pt, pos: int) -> dict:
    """Iteration `pos` of a PhaseTrace as plain data: phase, loop indices, PE, cycle."""
    d = {"phase": pt.phase.name}
    d.update({k: int(v[pos]) for k, v in pt.index.items()})
    d.update(pe=int(pt.pe[pos]), cycle=int(pt.cycle[pos]))
    return d


def describe(trace: Trace, phase_index: int, pos: int) -> dict:
    """One iteration of a trace as plain data: phase, loop indices, PE, cycle."""
    return iteration(trace.phases[phase_index], pos)


def transposed(trace, ids: np.ndarray) -> np.ndarray:
    """Ids of the transposes of 2-d array elements (a[i, j] -> a[j, i]); `trace`: a Trace or a
    Stream (its layout)."""
    layout = trace.layout
    arr = layout.array_of(ids)
    out = np.full(ids.size, -1)
    for k in np.unique(arr):
        a = layout.arrays[k]
        ext = layout.extents[a.name]
        if len(ext) != 2 or ext[0] != ext[1]:
            continue
        sel = arr == k
        off = layout.offset[a.name]
        i, j = np.divmod(ids[sel] - off, ext[1])
        out[sel] = off + j * ext[1] + i
    return out


def run(schedule: Schedule, n: int, m: int, seed: int = 0, max_violations: int = 5,
        d: int | None = None, scale: float = 1.0) -> RunResult:
    """Execute `schedule` on the ring for (n, m) and d (default n); report violations, counts and the
    numeric error (`scale`: see `numerics.Numerics`; 1, the paper's, by default)."""
    return simulate(schedule, n, m, seed, max_violations, d, scale)


def computed(schedule: Schedule, n: int, m: int, inputs: dict, d: int | None = None, scale: float = 1.0):
    """The values the ring computes from `inputs` (name -> array), as `run` executes them (the
    phases of a lock-step group in the order they read each other): its `Numerics`."""
    stream = Stream(schedule, n, m, d)
    check_simulable(stream)
    try:
        return _Machine(stream, inputs, scale, two_pass=False).numerics
    except _Later:
        return _Machine(stream, inputs, scale, two_pass=True).numerics


def simulate(schedule: Schedule, n: int, m: int, seed: int = 0, max_violations: int = 5,
             d: int | None = None, scale: float = 1.0, chunk: int = CHUNK) -> RunResult:
    """`run`, reading about `chunk` iterations at a time."""
    stream = Stream(schedule, n, m, d, chunk)
    check_simulable(stream)
    inputs = random_inputs(schedule.problem, n, stream.P.d, seed, stream.layout.sizes)
    try:
        machine = _Machine(stream, inputs, scale, two_pass=False)
    except _Later:
        machine = _Machine(stream, inputs, scale, two_pass=True)
    arith = sum(machine.ops.get(k, 0) for k in ARITHMETIC)
    util = arith / (m * stream.cycles) if stream.cycles else 0.0
    err, difference = float("inf"), None
    if not machine.broken:
        refs, err = reference_outputs(schedule.problem, inputs, scale), 0.0
        for out in schedule.problem.outputs:           # the worst of every output
            y = machine.numerics.output(schedule.problem, out)
            empty = empty_sums(schedule.problem, n, stream.P.d, out, stream.layout.sizes)
            if empty is not None:                      # a sum of no terms is 0, touched or not
                y = np.where(empty & np.isnan(y), 0.0, y)
            err = max(err, relative_error(y, refs[out.name]))
            difference = difference or first_difference(out.name, y, refs[out.name])
    return RunResult(n, m, stream.cycles, machine.ops, util, err, machine.violations(max_violations), difference)


# ----------------------------------------------------------------------------- the passes

# rule families in the order the whole-trace checker reports them (one violation each)
ORDER = ("well-formed", "pe", "unstarted", "twice", "lost", "read")


class _Later(Exception):
    """A phase reads (or copies) a sum that a later phase still adds to: two passes are needed."""


class _Machine:
    """One run: the passes over the stream and what they found."""

    def __init__(self, stream: Stream, inputs: dict, scale: float, two_pass: bool):
        self.stream, self.m = stream, stream.m
        layout = stream.layout
        self.name = lambda i: layout.name(int(i))
        self.sym = [layout.arrays.index(a) for a in stream.schedule.problem.symmetric_pairs]
        self.inputs = set(stream.schedule.problem.inputs)
        self.found: dict = {}
        self.ops = {kind: 0 for kind in ALWAYS_COUNTED}   # and each other kind the run meets
        self.visited = [False] * len(stream.tuples)
        self.broken = False                     # a well-formed violation: only those are reported
        self.K = len(stream.tuples)
        self.sums = RunningSums(layout.size, self.m, self.K)
        self.begun = np.full(layout.size, np.iinfo(np.int64).max)   # cycle of each sum's first term
        self.number = {p.name: k for k, p in enumerate(stream.schedule.phases)}
        self.occupied: dict = {}                # lock-step group -> the g of each (cycle, PE) taken
        self.holds = Holds(stream.home, self.m, stream.cycles)
        self.numerics = Numerics(layout, inputs, scale, stream.schedule.problem)
        probe = stream.window([s for s, t in zip(stream.starts, stream.tuples) if t])
        self.accumulates = [pt.op.accumulates and pt.step.target is not None for pt in probe.phases]
        self.order = self._ordered(probe)
        self.position = {k: i for i, k in enumerate(self.order)}
        self.last_adder = {}                    # array -> the last phase that adds to its sums
        for k in self.order:
            if self.accumulates[k] and stream.tuples[k]:
                self.last_adder[probe.phases[k].step.target.array.name] = k
        if two_pass:
            self._two_passes()
        else:
            self._one_pass()

    def _one_pass(self):
        for k in self.order:
            self._begin(k)
            deferred = self._visit(k, sums=True, execute=True, slots="settled")
            self._end(k)
            self._settle(k)
            if deferred and not self.broken:
                self._visit(k, sums=False, execute=False, slots=deferred)

    def _two_passes(self):
        for k in self.order:
            if self.accumulates[k]:
                self._visit(k, sums=True, execute=False, slots=set())
        for k in self.order:
            self._settle(k)
        for k in self.order:
            self._begin(k)
            self._visit(k, sums=False, execute=True, slots="all")
            self._end(k)

    def _grouped(self, k) -> bool:
        slots = self.stream.schedule.slots
        return slots.count(slots[k]) > 1

    def _begin(self, k) -> None:
        """The phases of a lock-step group read each other's results as they are made (the
        ring-locality rules say when they may), not as they were when the group began."""
        if self._grouped(k):
            self.numerics.live()

    def _end(self, k) -> None:
        slots = self.stream.schedule.slots
        i = self.order.index(k)
        if i + 1 == len(self.order) or slots[self.order[i + 1]] != slots[k]:
            self.numerics.end()

    def _ordered(self, probe) -> list:
        """The phases in the order they are read: in time order, and within a lock-step group each
        phase after those whose results it reads (as written where they read each other's)."""
        slots, out = self.stream.schedule.slots, []
        for s in dict.fromkeys(slots):
            todo = [k for k, x in enumerate(slots) if x == s]
            made = {k: probe.phases[k].step.target.array.name for k in todo
                    if probe.phases[k].step.target is not None}
            while todo:
                ready = [k for k in todo if not any(j != k and j in todo and made.get(j) in
                                                    {r.array.name for r in probe.phases[k].step.operands}
                                                    for j in made)]
                k = (ready or todo)[0]
                out.append(k)
                todo.remove(k)
        return out

    def _settle(self, k: int) -> None:
        """The sums phase k was the last to add to are final: hold them where they were left."""
        if self.broken:
            return
        layout = self.stream.layout
        for name, last in self.last_adder.items():
            if last == k:
                lo = layout.offset[name]
                self.holds.add(*self.sums.final_nodes(lo, lo + int(np.prod(layout.extents[name]))))

    def _settled(self, k: int, array: str) -> str:
        last = self.last_adder.get(array)
        if last is None:
            return "settled"
        return "settled" if self.position[last] < self.position[k] else "own" if last == k else "later"

    def _visit(self, k: int, sums: bool, execute: bool, slots) -> set:
        """One pass over phase k. `slots` are the reads and copies it checks: a set of operand indices
        and "send", "all", or "settled": those whose data are settled, deferring the others (returned:
        the phase's own sums; a later phase's raise _Later)."""
        deferred: set = set()
        first = not self.visited[k]
        self.visited[k] = True
        if not first and self.broken:
            return deferred
        for pt in self.stream.blocks(k):
            if first:
                self._count(pt)
                self._well_formed(k, pt)
            if self.broken:
                continue
            if first:
                self._one_op_per_pe(pt)
                self._shared_cycles(k, pt)
            if sums and pt.op.accumulates:
                s = _positions(pt.node & pt.starts)
                np.minimum.at(self.begun, pt.target[s], pt.cycle[s])
                self.sums.block(pt, self._offer, self.name, k)
            if execute and not pt.op.accumulates and pt.step.target is not None:
                a = _positions(pt.active)                # single-assignment results (DIV)
                self.holds.add(pt.target[a], pt.pe[a], pt.cycle[a] + 1)
            self._reads(k, pt, slots, deferred)
            if execute:
                self.numerics.block(pt)
        return deferred

    def _now(self, k, array, slot, slots, deferred, count) -> bool:
        """Is this read slot checked in this pass? (Defer or give up on unsettled data.)"""
        if slots != "settled":
            return slots == "all" or slot in slots
        status = self._settled(k, array)
        if status == "settled":
            return True
        if count and status == "later":
            raise _Later(array)
        if count:
            deferred.add(slot)
        return False

    def _reads(self, k, pt, slots, deferred) -> None:
        m, holds, st = self.m, self.holds, pt.step
        act = _positions(pt.active)
        check = []
        for o, ref in enumerate(st.operands):
            if self._now(k, ref.array.name, o, slots, deferred, _count(act, pt)):
                check.append((o, act, "operand", ref.array))
        if st.send is not None:
            s = _positions(pt.send & ~pt.moves)                # copies
            if self._now(k, st.send.datum.array.name, "send", slots, deferred, _count(s, pt)):
                sent, cyc = pt.sent[s], pt.cycle[s]
                last = self.sums.final[sent]
                fresh = _positions((last < 0) | (last <= cyc))  # a partial sum copied early is stale
                to = RULES.next_pe(pt.pe[s][fresh], m)
                holds.add(pt.stored[s][fresh], to, cyc[fresh] + 1)
                own = pt.active[s] & (sent == pt.target[s])     # an op may send what it just made
                check.append(("send", _positions(~own) if isinstance(s, slice) else s[~own], "sent datum",
                              st.send.datum.array))
        problem = self.stream.schedule.problem
        running = st.op is Op.EAC and st.target is not None and rescaled(problem, st.target.array)
        for slot, pos, kind, array in check:
            ids = pt.sent[pos] if slot == "send" else pt.operands[slot][pos]
            ok = holds.usable(ids, pt.pe[pos], pt.cycle[pos], array in self.inputs)
            if running and slot == 1:                # the reference, read while its sum grows
                ok |= (self.begun[ids] < pt.cycle[pos]) & (self.sums.left[ids] == pt.pe[pos])
            for i in np.flatnonzero(~ok)[:1]:
                p = _at(pos, i)
                self._offer(("read", k, len(st.operands) if slot == "send" else slot), (self._g(pt, p),),
                            "ring-locality", f"{self.name(ids[i])} ({kind}) is not on PE {pt.pe[p]} "
                            f"with its final value in cycle {pt.cycle[p]}", (self._g(pt, p),))

    def _count(self, pt) -> None:
        self.ops[pt.op.value] = self.ops.get(pt.op.value, 0) + int(np.count_nonzero(pt.active))
        self.ops["MOVE"] += int(np.count_nonzero(vocabulary.forwards(pt.active, pt.send)))

    def _well_formed(self, k, pt) -> None:
        """PEs and indices in range; renames only between declared-equal data."""
        act = pt.active
        ids = [pt.target] if pt.step.target is not None else []
        ids += pt.operands + [pt.sent[pt.send], pt.stored[pt.send]]
        if pt.pe.min(initial=1) >= 1 and pt.pe.max(initial=1) <= self.m and \
                min(int(x.min(initial=0)) for x in ids) >= 0 and np.array_equal(pt.sent, pt.stored):
            return                                      # the usual case, by reductions alone
        bad = (pt.pe < 1) | (pt.pe > self.m)
        if pt.step.target is not None:
            bad |= act & (pt.target < 0)
        for o in pt.operands:
            bad |= act & (o < 0)
        bad |= pt.send & ((pt.sent < 0) | (pt.stored < 0))
        bad &= pt.busy
        renamed = np.flatnonzero(pt.send & (pt.sent != pt.stored) & ~bad)
        if renamed.size:
            sent = pt.sent[renamed]
            ok = np.isin(self.stream.layout.array_of(sent), self.sym)
            ok &= transposed(self.stream, sent) == pt.stored[renamed]
            bad[renamed[~ok]] = True
        for i in np.flatnonzero(bad)[:1]:
            self.broken = True
            self._offer(("well-formed", k), (self._g(pt, i),), "well-formed",
                        "a PE or an array index is out of range, or a copy is renamed to a datum "
                        "not declared equal", (self._g(pt, i),))

    def _one_op_per_pe(self, pt) -> None:
        """One op (or forward) per PE per cycle: so at most one send per link per cycle."""
        if np.array_equal(pt.pe, pt.index["l"]):
            return
        b = np.flatnonzero(pt.busy)
        if not b.size:
            return
        key = (pt.cycle[b] - pt.cycle[0]) * (self.m + 1) + pt.pe[b]
        dup = np.flatnonzero(np.bincount(key) > RULES.ops_per_cycle)
        if dup.size:
            i, j = b[np.flatnonzero(key == dup[0])[:2]]
            self._offer(("pe",), (int(pt.cycle[i]), int(pt.pe[i])), "no-conflict",
                        f"two ops on PE {pt.pe[i]} in cycle {pt.cycle[i]}", (self._g(pt, i), self._g(pt, j)))

    def _shared_cycles(self, k, pt) -> None:
        """One op per PE per cycle across the phases of a lock-step group (each phase's own
        cycles are `_one_op_per_pe`'s)."""
        slots = self.stream.schedule.slots
        members = [j for j, s in enumerate(slots) if s == slots[k]]
        if len(members) == 1:
            return
        start = self.stream.starts[members[0]]
        length = max(self.stream.tuples[j] for j in members)
        taken = self.occupied.setdefault(slots[k], np.full(length * self.m, -1, dtype=np.int64))
        b = np.flatnonzero(pt.busy & (pt.pe >= 1) & (pt.pe <= self.m))
        key = (pt.cycle[b] - start) * self.m + pt.pe[b] - 1
        other = taken[key]
        for i in np.flatnonzero(other >= 0)[:1]:
            g = self._g(pt, int(b[i]))
            self._offer(("pe",), (int(pt.cycle[b[i]]), int(pt.pe[b[i]])), "no-conflict",
                        f"two ops on PE {pt.pe[b[i]]} in cycle {pt.cycle[b[i]]}", (int(other[i]), g))
        free = other < 0
        taken[key[free]] = (pt.cycle[b[free]] * self.m + b[free] % self.m) * self.K + k

    def _g(self, pt, pos: int) -> int:
        """The global number of a block's iteration: (cycle · m + its place in the cycle) · K + its
        phase's number (the `RunningSums` numbering)."""
        return (int(pt.cycle[pos]) * self.m + int(pos) % self.m) * self.K + self.number[pt.phase.name]

    def _offer(self, family: tuple, key: tuple, rule: str, message: str, gs) -> None:
        """A violation of a rule family: kept if it comes before the one kept so far."""
        if family not in self.found or key < self.found[family][0]:
            self.found[family] = (key, rule, message, tuple(int(x) for x in gs))

    def violations(self, limit: int) -> list:
        families = sorted(self.found, key=lambda f: (ORDER.index(f[0]),) + f[1:])
        if self.broken:
            families = [f for f in families if f[0] == "well-formed"]
        chosen = [self.found[f] for f in families[:limit]]
        if not chosen:
            return []
        gs = {x for _, _, _, xs in chosen for x in xs}
        window = self.stream.window({x // (self.m * self.K) for x in gs})
        named = {}
        for x in gs:
            k, y = x % self.K, x // self.K
            pt = window.phases[k]
            named[x] = iteration(pt, int(np.flatnonzero(pt.cycle == y // self.m)[y % self.m]))
        return [Violation(rule, message, tuple(named[x] for x in xs)) for _, rule, message, xs in chosen]


def _positions(mask: np.ndarray):
    """The positions where `mask` holds: slice(None) when it holds everywhere (no copy)."""
    return slice(None) if mask.all() else np.flatnonzero(mask)


def _count(pos, pt) -> int:
    return pt.size if isinstance(pos, slice) else pos.size


def _at(pos, i: int) -> int:
    """The block position of the i-th of `pos`."""
    return int(i) if isinstance(pos, slice) else int(pos[i])

