"""Mutants of Algorithm 1: each a plausible slip in the index formulas, witnesses or structure."""

from __future__ import annotations

from dataclasses import replace

from ringproof.schedules import algo1
from ringproof.schedules.dsl import At, Loop, Move, Schedule
from ringproof.schedules.expr import and_, eq, mod, ne, not_, wrap

# Without Algorithm 1's stay hints: each mutant's exact memory peak would be derived again (about
# 2 s of CPU each); test_balance_memory.py gives one mutant the hints back.
BASE = replace(algo1.ALGO1, stays={})


def _with_phase(name: str, new_phase) -> Schedule:
    phases = tuple(new_phase if p.name == name else p for p in BASE.phases)
    return replace(BASE, name=f"mutant-{name}", phases=phases)


def _map_step(phase_name: str, f, **phase_changes) -> Schedule:
    old = BASE.phase(phase_name)

    def step(P, ix):
        return f(P, ix, old.step(P, ix))

    return _with_phase(phase_name, replace(old, step=step, **phase_changes))


def _shift_ref(ref, pos, P, by=1):
    idx = list(ref.idx)
    idx[pos] = mod(idx[pos] - 1 + by, P.n) + 1
    return ref.array[tuple(idx)]


def off_by_one_B(P, ix, st):
    """phase 1 computes w'_A,B+1 in place of w'_AB (B one too large)."""
    t = _shift_ref(st.target, 1, P)
    return replace(st, target=t, operands=(st.operands[0], _shift_ref(st.operands[1], 0, P)),
                   send=Move(t, when=st.send.when))


def off_by_one_C(P, ix, st):
    """phase 1 multiplies column C+1 (read on a PE that does not hold it)."""
    return replace(st, operands=tuple(_shift_ref(o, 1, P) for o in st.operands))


def wrong_direction(P, ix, st):
    """B constant along l + j: each partial sum's next term is on PE l-1, against the ring."""
    B = mod(mod(ix.l + ix.j, P.m) + (ix.i - 1) * P.m - 1, P.n) + 1
    t = st.target.array[st.target.idx[0], B]
    k_ref = st.operands[1].array[B, st.operands[1].idx[1]]
    prev = At("phase1", dict(st.prev.idx, l=wrap(ix.l + 1, P.m)))
    return replace(st, target=t, operands=(st.operands[0], k_ref), send=Move(t, when=st.send.when),
                   prev=prev)


def missing_send(P, ix, st):
    """the transfer after step j = 1 is forgotten."""
    return replace(st, send=Move(st.target, when=and_(ne(ix.j, P.n), ne(ix.j, 1))))


def send_on_last(P, ix, st):
    """`if j ≠ n` dropped: the finished w'_AB also leaves its PE."""
    return replace(st, send=Move(st.target))


def drop_iteration(P, ix, st):
    """a guard that skips one iteration (h = i = j = l = 1)."""
    return replace(st, guard=not_(and_(eq(ix.h, 1), eq(ix.i, 1), eq(ix.j, 1), eq(ix.l, 1))))


def wrong_prev_phase3(P, ix, st):
    """phase 3 claims y_A[C] came from the previous PE, but y stays put."""
    return replace(st, prev=At("phase3", dict(st.prev.idx, l=wrap(ix.l - 1, P.m))))


def swapped_ranges() -> Schedule:
    """the loop headers of i and j exchanged with their ranges: i ∈ [1, n], j ∈ [1, n/m]."""
    old = BASE.phase("phase1")
    return _with_phase("phase1", replace(old, loops=(Loop("h", 1, "n"), Loop("i", 1, "n"),
                                                     Loop("j", 1, "k"))))


def wrong_phase_order() -> Schedule:
    """phase 2's division runs before the row sums it divides by."""
    p1, p2a, p2b, p3 = BASE.phases
    return replace(BASE, name="mutant-order", phases=(p1, p2b, p2a, p3))


def interchange_ij() -> Schedule:
    """phase 1 with loops i and j interchanged (ranges kept): legal, partial sums just wait."""
    old = BASE.phase("phase1")
    return _with_phase("phase1", replace(old, loops=(Loop("h", 1, "n"), Loop("j", 1, "n"),
                                                     Loop("i", 1, "k"))))


REFUTED = {
    "off-by-one B": _map_step("phase1", off_by_one_B),
    "off-by-one C": _map_step("phase1", off_by_one_C),
    "wrong ring direction": _map_step("phase1", wrong_direction),
    "missing send": _map_step("phase1", missing_send),
    "send on the last step": _map_step("phase1", send_on_last),
    "swapped loop ranges": swapped_ranges(),
    "guard drops an iteration": _map_step("phase1", drop_iteration),
    "wrong phase order": wrong_phase_order(),
    "wrong prev witness": _map_step("phase3", wrong_prev_phase3),
}

LEGAL = {"loop interchange i/j": interchange_ij()}
