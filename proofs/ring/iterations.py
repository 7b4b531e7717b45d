"""Symbolic iterations of a phase for the prover: fresh digit variables, domain, step, timestamp."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import z3

from ringproof.model.ring import vocabulary
from ringproof.model.ring.rules import RULES
from ringproof.proofs.ring.normalize import PARAMS, Ctx, DVal, NormalizationError, multiple
from ringproof.schedules.dsl import HOME, At, Either, Phase, Ref, Schedule, Step
from ringproof.schedules.expr import and_, between, eq, le, lift, lt, not_, or_, var


@dataclass
class It:
    """An iteration of `phase` whose indices are the Terms `idx` (fresh variables or formulas)."""

    phase: Phase
    phase_no: int
    idx: dict
    prefix: str | None = None          # set for fresh iterations: variables '<prefix>.<name>'
    slot: int | None = None            # its time slot (`Schedule.slots`); None: its phase number
    _step: Step | None = field(default=None, repr=False)

    @property
    def step(self) -> Step:
        if self._step is None:
            st = self.phase.step(PARAMS, SimpleNamespace(**self.idx))
            if not isinstance(st, Step):
                raise TypeError(f"phase {self.phase.name}: step returned {type(st).__name__}")
            self._step = st
        return self._step

    def __post_init__(self):
        if self.slot is None:
            self.slot = self.phase_no

    @property
    def seq(self) -> list:
        return [self.idx[lp.name] for lp in self.phase.loops]


def new_var(ctx: Ctx, name: str, lo, hi) -> DVal:
    """A fresh integer variable ranging over [lo, hi], in the digit form that keeps queries linear."""
    lo_v, hi_v = ctx.val(lift(lo)), ctx.val(lift(hi))
    length = DVal(ctx.built("sub", hi_v.q, lo_v.q), ctx.built("length", hi_v.r, lo_v.r))
    vq, vr = z3.Int(f"{name}.q"), z3.Int(f"{name}.r")
    unit = next((u for u in ctx.units if ctx.prove(z3.And(length.q == u, length.r == 0))), None)
    if ctx.block_split and unit is not None and multiple(unit, ctx.U) and not lo_v.blocks:  # blocks of U
        blocks = ctx.to_blocks(DVal(length.q, z3.IntVal(0))).p
        ctx.assumptions += [0 <= vq, vq < blocks, 0 <= vr, vr < ctx.U]
        ctx.use_lemma("digit-split-box")
        value = DVal(lo_v.q, ctx.built("add", lo_v.r, vr), p=vq)
    elif unit is not None:                                              # ranges over n (or d) values
        ctx.assumptions += [0 <= vq, vq < unit, 0 <= vr, vr < ctx.m]
        ctx.use_lemma("digit-split-box")
        value = DVal(ctx.built("add", lo_v.q, vq), ctx.built("add", lo_v.r, vr))
    elif ctx.prove(z3.And(length.q == 1, length.r == 0)):            # ranges over m values
        ctx.assumptions += [0 <= vr, vr < ctx.m]
        value = DVal(lo_v.q, ctx.built("add", lo_v.r, vr))
    elif ctx.prove(length.q == 0) and ctx.prove(lo_v.q == 0):        # a count of blocks
        v = z3.Int(name)
        ctx.assumptions += [lo_v.r <= v, v <= hi_v.r]
        value = DVal(z3.IntVal(0), v)
    else:                                                             # general: digits, bounded
        ctx.assumptions += [0 <= vq, 0 <= vr, vr < ctx.m]
        value = DVal(ctx.built("add", lo_v.q, vq), ctx.built("add", lo_v.r, vr))
        ctx.env[name] = value
        ctx.assumptions.append(ctx.cond(le(var(name), hi)))
    ctx.env[name] = value
    return value


def fresh(ctx: Ctx, schedule: Schedule, phase: Phase, prefix: str, share: It | None = None) -> It:
    """A new symbolic iteration; its loop ranges and PE index join the assumptions (its guard does
    not: each check states whether it needs the iteration active, busy or a node of its sum).

    With `share`, the new iteration runs in the same cycle as `share` (same sequential indices) and
    only its PE index is new.
    """
    idx: dict = {}
    for lp in phase.loops:
        if share is not None:
            idx[lp.name] = share.idx[lp.name]
            continue
        lo, hi = lp.bounds(PARAMS, SimpleNamespace(**idx))
        new_var(ctx, f"{prefix}.{lp.name}", lo, hi)
        idx[lp.name] = var(f"{prefix}.{lp.name}")
    new_var(ctx, f"{prefix}.l", 1, PARAMS.m)
    idx["l"] = var(f"{prefix}.l")
    k = schedule.phases.index(phase)
    return It(phase, k, idx, prefix, slot=schedule.slots[k])


def at(schedule: Schedule, w: At) -> It:
    """The iteration a witness names (its indices are formulas of other iterations' variables)."""
    phase = schedule.phase(w.phase)
    missing = set(phase.index_names) - set(w.idx)
    if missing:
        raise NormalizationError(f"witness At({w.phase!r}) lacks indices {sorted(missing)}")
    k = schedule.phases.index(phase)
    return It(phase, k, {name: lift(w.idx[name]) for name in phase.index_names}, slot=schedule.slots[k])


def exists(it: It):
    """Term: the iteration's indices lie in their loop ranges and l ∈ [1, m]."""
    conds, ns = [], {}
    for lp in it.phase.loops:
        lo, hi = lp.bounds(PARAMS, SimpleNamespace(**ns))
        conds.append(between(lo, it.idx[lp.name], hi))
        ns[lp.name] = it.idx[lp.name]
    conds.append(between(1, it.idx["l"], PARAMS.m))
    return and_(*conds)


def active(it: It):
    """Term: the iteration's op happens (its guard)."""
    return lift(it.step.guard)


def sending(it: It):
    st = it.step
    return lift(False) if st.send is None else lift(st.send.when)


def busy(it: It):
    return vocabulary.busy(active(it), sending(it))


def moves(it: It):
    """Term: the iteration's send moves its own running sum."""
    st = it.step
    if st.send is None or not st.op.accumulates or st.target is None:
        return lift(False)
    return vocabulary.moves(sending(it), lift(st.send.copy), ref_eq(st.send.datum, st.target))


def node(it: It):
    """Term: the iteration touches its running sum (adds a term or forwards the partial sum)."""
    return vocabulary.node(active(it), moves(it)) if it.step.op.accumulates else lift(False)


def starts(it: It):
    """Term: the iteration starts its sum from 0."""
    st = it.step
    return lift(False) if st.first is None else vocabulary.starts(active(it), lift(st.first))


def same_iteration(a: It, b: It):
    if a.phase_no != b.phase_no:
        return lift(False)
    return and_(*[eq(a.idx[k], b.idx[k]) for k in a.phase.index_names])


def before(a: It, b: It):
    """Term: a's cycle is earlier than b's (phases in order, loop tuples lexicographically; the
    phases of a lock-step group share cycles, and their loop nests agree but for the outermost
    bound, so their tuples compare the same way: an operand made in the same cycle is not there)."""
    if a.slot != b.slot:
        return lift(a.slot < b.slot)
    result = lift(False)
    for x, y in reversed(list(zip(a.seq, b.seq))):
        result = or_(lt(x, y), and_(eq(x, y), result))
    return result


def ref_eq(a: Ref | None, b: Ref | None):
    if a is None or b is None or a.array != b.array:
        return lift(False)
    return and_(*[eq(x, y) for x, y in zip(a.idx, b.idx)])


def next_pe(pe):
    """The PE a datum sent on `pe` reaches (the ring's rules, model/ring/rules.py)."""
    return RULES.next_pe(pe, PARAMS.m)


def alternatives(w, cond=None):
    """Flatten a witness into (condition Term, HOME | At) pairs."""
    cond = lift(True) if cond is None else cond
    if isinstance(w, Either):
        c = lift(w.cond)
        return alternatives(w.then, and_(cond, c)) + alternatives(w.other, and_(cond, not_(c)))
    if w is HOME or isinstance(w, At):
        return [(cond, w)]
    raise NormalizationError(f"not a witness: {w!r}")
