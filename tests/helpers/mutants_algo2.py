"""Mutants of Algorithm 2's phase 1: plausible slips in the reuse transfers and the group structure."""

from __future__ import annotations

from dataclasses import replace

from ringproof.schedules import algo2
from ringproof.schedules.dsl import Loop, Schedule
from ringproof.schedules.expr import and_, eq, ge, ite, mod, not_
from ringproof.schedules.problems import w1, x

BASE = algo2.ALGO2
OLD = BASE.phase("phase1")


def _mirror_at(P, ix, offset=-1):
    """Does iteration ix send the copy that is stored as the mirror (hop hops + 1 + offset)?"""
    return and_(ge(ix.j, P.n), eq(ix.j, P.n + algo2.hops(P, ix.h) + offset))


def _rebuild(P, ix, st, A=None, mirror=None):
    """The step with row A and the rename condition `mirror` (both default to the original's)."""
    B, C = st.target.idx[1], st.operands[0].idx[1]
    A = st.target.idx[0] if A is None else A
    mirror = _mirror_at(P, ix) if mirror is None else mirror
    t = w1[A, B]
    return replace(st, target=t, operands=(x[A, C], x[B, C]),
                   send=replace(st.send, datum=t, as_=w1[ite(mirror, B, A), ite(mirror, A, B)]))


def _mutant(name: str, step=None, j_hi=None) -> Schedule:
    loops = OLD.loops if j_hi is None else OLD.loops[:2] + (Loop("j", 1, j_hi),)
    new = replace(OLD, loops=loops,
                  step=OLD.step if step is None else (lambda P, ix: step(P, ix, OLD.step(P, ix))))
    return replace(BASE, name=f"mutant-{name}", phases=(new,) + BASE.phases[1:])


def one_hop_too_far(P, ix, st):
    """the copy makes hops + 1 hops (one more MOVE cycle) before it is stored as w'_BA."""
    return _rebuild(P, ix, st, mirror=_mirror_at(P, ix, offset=0))


def wrong_direction(P, ix, st):
    """lines 9-12 with the orientations exchanged: the mirror is sent away from PE ≡ A."""
    B, h = st.target.idx[1], ix.h
    A = ite(algo2._plus(P, h), mod(B - h - 1, P.n) + 1, mod(B + h - 1, P.n) + 1)
    return _rebuild(P, ix, st, A=A)


def no_store_as(P, ix, st):
    """the last hop keeps the name w'_AB: the mirror w'_BA is never stored."""
    return _rebuild(P, ix, st, mirror=False)


def drop_half_group(P, ix, st):
    """even n: group n/2 (lines 36-37) is skipped."""
    return replace(st, guard=and_(st.guard, not_(eq(2 * ix.h, P.n))))


def diagonal_twice(P, ix, st):
    """group 1 recomputes the main diagonal w'_BB in place of its own."""
    return _rebuild(P, ix, st, A=ite(eq(ix.h, 1), st.target.idx[1], st.target.idx[0]))


REFUTED = {
    "reuse one hop too far": _mutant("far", one_hop_too_far,
                                     lambda P, ix: P.n + algo2.extra(P, ix.h) + ite(
                                         ge(algo2.hops(P, ix.h), 1), 1, 0)),
    "reuse in the wrong direction": _mutant("direction", wrong_direction),
    "missing store as w'_BA": _mutant("store-as", no_store_as),
    "even-n group dropped": _mutant("half", drop_half_group),
    "a diagonal computed twice": _mutant("twice", diagonal_twice),
    "an extra transfer cycle removed": _mutant(
        "short", j_hi=lambda P, ix: P.n + ite(ge(algo2.extra(P, ix.h), 1), algo2.extra(P, ix.h) - 1, 0)),
}
