"""What the cycle-level model can hold: its trace keeps one record per iteration, O(n³) of them."""

from __future__ import annotations

from ringproof.errors import BadInput

MAX_N = 160   # about 1.5 GB of trace for Algorithm 3 (0.8 GB measured at n = 128)


def check_traceable(n: int, what: str = "-n") -> None:
    """Refuse up front a size whose trace would not fit in bounded memory, naming the limit."""
    if n > MAX_N:
        raise BadInput(f"{what} {n} is too large for the cycle-level model: it records every "
                       f"iteration (O(n³) of them) and is limited to n ≤ {MAX_N}; the parametric "
                       "proofs (`prove TARGET`) cover every n")
