"""What the cycle-level models can hold.

`build_trace` (the bounded tier) keeps one record per iteration, O(n³) of them. The streaming
simulator (`machine.run`) keeps per-datum records and one table of the earliest cycle of every
(datum, PE) pair: O(data · m).
"""

from __future__ import annotations

import numpy as np

from ringproof.errors import BadInput
from ringproof.model.ring.holds import table_dtype

MAX_N = 160   # about 1.5 GB of trace for Algorithm 3 (0.8 GB measured at n = 128)
TABLE_BYTES = 1 << 30   # the simulator's (datum, PE) table: with the rest, well under 2 GB


def check_traceable(n: int, what: str = "-n") -> None:
    """Refuse up front a size whose trace would not fit in bounded memory, naming the limit."""
    if n > MAX_N:
        raise BadInput(f"{what} {n} is too large for the cycle-level model: it records every "
                       f"iteration (O(n³) of them) and is limited to n ≤ {MAX_N}; the parametric "
                       "proofs (`prove TARGET`) cover every n")


def check_simulable(stream) -> None:
    """Refuse a size whose (datum, PE) table (`holds.Holds`) would exceed TABLE_BYTES, naming it."""
    pairs = stream.layout.size * stream.m
    size = pairs * np.dtype(table_dtype(stream.cycles)).itemsize
    if size > TABLE_BYTES:
        raise BadInput(f"n={stream.n}, d={stream.P.d}, m={stream.m} is too large for the ring "
                       f"simulator: it keeps the earliest cycle of every (datum, PE) pair, "
                       f"{pairs:,} of them here ({size / 2**30:.1f} GiB), and is limited to "
                       f"{TABLE_BYTES / 2**30:.0f} GiB of them")
