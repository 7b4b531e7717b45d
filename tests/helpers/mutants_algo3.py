"""Mutants of Algorithm 3: each a plausible slip in the masking, the row groups or the phase order.

`REFUTED` maps a name to (schedule, the property and phase expected to fail).
"""

from __future__ import annotations

from dataclasses import replace

from ringproof.schedules import algo3
from ringproof.schedules.dsl import Loop, Move, Schedule
from ringproof.schedules.expr import div, ite, le, lt

BASE = algo3.ALGO3


def _with_phase(name: str, new_phase, tag: str) -> Schedule:
    phases = tuple(new_phase if p.name == name else p for p in BASE.phases)
    return replace(BASE, name=f"mutant-{tag}", phases=phases)


def _map_step(phase_name: str, f, tag: str) -> Schedule:
    old = BASE.phase(phase_name)
    return _with_phase(phase_name, replace(old, step=lambda P, ix: f(P, ix, old.step(P, ix))), tag)


def diagonal_masked(P, ix, st):
    """phase 2 step 2 divides only where B < A: the diagonal weights w[A, A] are never made."""
    A, B = st.target.idx
    return replace(st, guard=lt(B, A))


def sums_masked_entry(P, ix, st):
    """phase 2 step 1 also adds exp(w'_A,A+1), a masked entry, to sum_A."""
    A = st.target.idx[0]
    B = st.operands[0].idx[1]
    return replace(st, guard=le(B, A + 1))


def pair_rows_off_by_one(P, ix, st):
    """group h pairs row n−h with row h−1 (i with n−i−1) in place of row h."""
    A, B = st.target.idx
    h = ix.h
    A2 = ite(le(A, h), h - 1, A)
    C = st.operands[0].idx[1]
    t = st.target.array[A2, B]
    return replace(st, target=t, operands=(st.operands[0].array[A2, C], st.operands[1]),
                   send=Move(t, when=st.send.when))


def middle_row_skipped(P, ix, st):
    """even n: the middle group h = n/2 (printed lines 12-13, a comment) does nothing."""
    return replace(st, guard=lt(2 * ix.h, P.n), send=Move(st.target, when=lt(2 * ix.h, P.n)))


def wrong_group_count() -> Schedule:
    """groups counted from 1: h ∈ [1, n div 2], so group 0 (row n) is never computed."""
    old = BASE.phase("phase1")
    loops = (Loop("h", 1, lambda P, ix: div(P.n, 2)),) + old.loops[1:]
    return _with_phase("phase1", replace(old, loops=loops), "group-count")


def weight_before_division() -> Schedule:
    """phase 3 runs before phase 2 step 2: it reads w_AB before the division makes it."""
    p1, p2a, p2b, p3 = BASE.phases
    return replace(BASE, name="mutant-order", phases=(p1, p2a, p3, p2b))


REFUTED = {
    "mask boundary off by one": (_map_step("phase2b", diagonal_masked, "diagonal"),
                                 ("coverage", "phase2b")),
    "phase-2 sum over a masked entry": (_map_step("phase2a", sums_masked_entry, "masked-sum"),
                                        ("coverage", "phase2a")),
    "row pairing i with n-i-1": (_map_step("phase1", pair_rows_off_by_one, "pairing"),
                                 ("coverage", "phase1")),
    "even-n middle row skipped": (_map_step("phase1", middle_row_skipped, "middle"),
                                  ("coverage", "phase1")),
    "wrong group count": (wrong_group_count(), ("coverage", "phase1")),
    "phase 3 reads a weight before its division": (weight_before_division(),
                                                   ("data-flow", "phase3")),
}
