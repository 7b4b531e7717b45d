"""Where each datum is usable from when: its input placement, and the earliest cycle of every
(datum, PE) pair that any hold (a copy that arrived, a DIV result, a finished sum) makes it usable.

A dense table of one cycle per pair: O(data · m) memory, whatever the number of iterations. Holds
may be added in any order (the table keeps the minimum); a read at cycle t asks only whether the
minimum is ≤ t, so a hold is needed in the table before any read of a later cycle, and a hold is
always at least one cycle after the op that makes it.
"""

from __future__ import annotations

import numpy as np

TABLE_DTYPES = (np.int32, np.int64)


def table_dtype(cycles: int):
    """The narrowest of TABLE_DTYPES that holds every cycle of the run and 'never'."""
    return next(t for t in TABLE_DTYPES if cycles + 1 < np.iinfo(t).max)


class Holds:
    """`home`: the PE of every input datum (0: not an input). The table's keys, datum · m + PE − 1,
    fit in int32 (`limits.check_simulable`)."""

    def __init__(self, home: np.ndarray, m: int, cycles: int):
        self.home = home.astype(np.min_scalar_type(m))    # small: it is read for every input read
        self.m = m
        dtype = table_dtype(cycles)
        self.never = np.iinfo(dtype).max
        self.table = np.full(home.size * m, self.never, dtype=dtype)

    def add(self, ids, pes, cycles) -> None:
        """Holds of datum ids on PEs from cycles (fastest in nondecreasing cycle order)."""
        if not ids.size:
            return
        key = ids * self.m + (pes - 1)
        new = np.minimum(self.table[key], cycles)
        self.table[key[::-1]] = new[::-1]        # numpy writes a repeated key's last value: the first
        late = np.flatnonzero(self.table[key] > new)
        if late.size:                            # (numpy does not promise it; ufunc.at only for these)
            np.minimum.at(self.table, key[late], new[late])

    def usable(self, ids, pes, cycles, inputs: bool = True) -> np.ndarray:
        """Whether each datum is usable on its PE in its cycle; `inputs`: some may be inputs."""
        if not inputs:
            return self.table[ids * self.m + (pes - 1)] <= cycles
        ok = self.home[ids] == pes
        rest = np.flatnonzero(~ok)
        if rest.size:
            ok[rest] = self.table[ids[rest] * self.m + (pes[rest] - 1)] <= cycles[rest]
        return ok
