"""What the cycle-level models can hold.

`build_trace` (the bounded tier) keeps one record per iteration, O(n³) of them. The streaming
simulator (`machine.run`) keeps per-datum records and one table of the earliest cycle of every
(datum, PE) pair: O(data · m), whatever the number of iterations.
"""

from __future__ import annotations

import numpy as np

from ringproof.errors import BadInput
from ringproof.model.ring.holds import table_dtype

MAX_N = 160   # about 1.5 GB of trace for Algorithm 3 (docs/machine.md, "The bounded tier's limit")
RECORDS = 3 << 29      # bytes of the simulator's records: with a block and the interpreter, < 2 GB
PER_DATUM = 60         # bytes it keeps per datum: values (2 × 8), running sums (20), home, renamed
                       # copies (8), the reference output's temporaries; and a cycle per (datum, PE)


def check_traceable(n: int, what: str = "-n") -> None:
    """Refuse up front a size whose trace would not fit in bounded memory, naming the limit."""
    if n > MAX_N:
        raise BadInput(f"{what} {n} is too large for the cycle-level model: it records every "
                       f"iteration (O(n³) of them) and is limited to n ≤ {MAX_N}; the parametric "
                       "proofs (`prove TARGET`) cover every n")


def check_simulable(stream) -> None:
    """Refuse a size whose records would exceed RECORDS, naming the limit: first with the narrowest
    cycle type (before the cycles are counted), then with the run's. (Under the limit the table's
    keys, datum · m + PE − 1, fit in int32.)"""
    data = stream.layout.size
    for cycles in (0, None):
        itemsize = np.dtype(table_dtype(stream.cycles if cycles is None else cycles)).itemsize
        need = data * (PER_DATUM + stream.m * itemsize)
        if need > RECORDS:
            raise BadInput(f"n={stream.n}, d={stream.P.d}, m={stream.m} is too large for the ring "
                           f"simulator: it keeps a record of each of the {data:,} data and the "
                           f"earliest cycle of each (datum, PE) pair, {need / 2**30:.1f} GiB here, and "
                           f"is limited to {RECORDS / 2**30:.1f} GiB")
