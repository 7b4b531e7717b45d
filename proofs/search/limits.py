"""What the bit-level SAT encodings can hold: a size whose encoding cannot fit is refused before
anything is built, the limit named in the one-line error.

Both encodings grow with the ops times the cycles, and no run is shorter than ceil(ops / m) cycles
(one op per PE per cycle), so `ops`, a closed form of the problem's sizes, bounds the memory from
below before the problem is built. The bytes per unit are the least measured (tracemalloc's peak
while `Encoding` is built, n = 4..16, m = 2..4): the estimate never exceeds what a run takes, so a
size refused would not have fitted.
"""

from __future__ import annotations

from ringproof.errors import BadInput
from ringproof.model.bitlevel.problem import op_count
from ringproof.model.ring.limits import RECORDS

BUDGET = RECORDS          # the same memory as the ring simulator's records
PER_SEARCH_SLOT = 1200    # bytes per (op, PE, cycle) of the search's encoding (1,250-1,390 measured)
PER_RUN_SLOT = 10         # bytes per (op, cycle) of a fixed run's encoding (10-18 measured)


def _gib(x: float) -> str:
    return f"{x / 2**30:,.1f} GiB"


def check_search(variant: str, n: int, m: int, d: int | None = None) -> None:
    """Refuse a search whose encoding at its first T already exceeds BUDGET."""
    ops = op_count(variant, n, d)
    need = PER_SEARCH_SLOT * ops * m * -(-ops // m)
    if need > BUDGET:
        raise BadInput(f"search: {variant} n={n}, m={m}{'' if d is None else f', d={d}'} is too large for "
                       f"the bit-level search: its {ops:,} ops need at least {_gib(need)} of encoding "
                       f"({PER_SEARCH_SLOT / 1000:.1f} kB per op, PE and cycle), and it is limited to "
                       f"{_gib(BUDGET)} (about {_max_ops(PER_SEARCH_SLOT):,} ops)")


def check_run_size(variant: str, n: int, m: int, d: int | None = None, cycles: int | None = None) -> None:
    """Refuse a fixed run's SAT check (`prove TARGET --method bitlevel`) whose encoding would exceed
    BUDGET: before the run is built from ceil(ops / m) cycles, after it from its own cycles."""
    ops = op_count(variant, n, d)
    T = -(-ops // m) if cycles is None else cycles
    need = PER_RUN_SLOT * ops * T
    if need > BUDGET:
        raise BadInput(f"n={n}, m={m} is too large for the bit-level SAT check: its {ops:,} ops over "
                       f"{'at least ' if cycles is None else ''}{T:,} cycles take {_gib(need)} of "
                       f"encoding, and it is limited to {_gib(BUDGET)} (ops × cycles ≤ "
                       f"{BUDGET // PER_RUN_SLOT:,}); the parametric proofs (`prove TARGET`) cover every n")


def _max_ops(per: int) -> int:
    return int((BUDGET / per) ** 0.5)
