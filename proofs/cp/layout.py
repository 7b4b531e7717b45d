"""A load balancer's index map against a context-parallel target's layout, at every valid size.

The map is a function `(seq_len, world_size) -> positions`: n 0-based token positions whose
consecutive n/m slices are the tokens of ranks 0..m−1 in local order (PyTorch's context-parallel
load balancers return exactly this). It is called for every (n, m) with m ≤ max_m, n ≤ max_n that
the target allows (its `requires`), smallest n first, and compared slot by slot with the target's
layout formula.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ringproof.errors import BadInput, RingproofError
from ringproof.schedules.context_parallel import SCHEDULES, schedule
from ringproof.schedules.dsl import params


@dataclass(frozen=True)
class Difference:
    """The first slot where the map and the layout disagree; None for a slot one side lacks."""

    n: int
    m: int
    rank: int
    slot: int
    expected: int | None
    got: int | None

    def __str__(self):
        want = "no slot" if self.expected is None else f"token {self.expected}"
        got = "nothing (too few positions)" if self.got is None else f"token {self.got}"
        return f"n={self.n}, m={self.m}, rank {self.rank}, slot {self.slot}: the layout has {want}, the map {got}"


@dataclass(frozen=True)
class LayoutCheck:
    """The outcome: `sizes` (n, m) pairs compared; `difference` the first one that differs, or None."""

    target: str
    max_n: int
    max_m: int
    sizes: int
    difference: Difference | None

    @property
    def ok(self) -> bool:
        return self.difference is None


def check_layout(fn, target: str, max_n: int = 256, max_m: int = 8) -> LayoutCheck:
    """`fn(seq_len, world_size)` against `target`'s layout for every valid size up to the bounds.

    BadInput when the target is not a context-parallel one, a bound is below 1, or `fn` raises or
    returns something that is not a sequence of integer positions (the CLI's exit 64)."""
    cp = schedule(target)
    if cp is None:
        raise BadInput(f"{target!r} has no token layout: expected one of {', '.join(sorted(SCHEDULES))}")
    for name, value in (("max_n", max_n), ("max_m", max_m)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise BadInput(f"{name} must be a positive integer, got {value!r}")
    sizes = 0
    for n in range(1, max_n + 1):
        for m in range(1, min(max_m, n) + 1):
            if not cp.valid(n, m):
                continue
            sizes += 1
            P = params(n, m)
            got = _positions(fn, n, m, f"a size {target} allows: {cp.requires_text}")
            diff = _first_difference(cp.positions(P), got, n, m, P.k)
            if diff is not None:
                return LayoutCheck(target, max_n, max_m, sizes, diff)
    return LayoutCheck(target, max_n, max_m, sizes, None)


def _positions(fn, n: int, m: int, allowed: str) -> np.ndarray:
    try:
        out = fn(n, m)
    except RingproofError:
        raise
    except Exception as err:   # the user's function: any failure is bad input, in one line
        raise BadInput(f"the index map raised at seq_len={n}, world_size={m} ({allowed}): "
                       f"{type(err).__name__}: {err}") from None
    try:
        arr = np.asarray(out).reshape(-1)
    except Exception as err:
        raise BadInput(f"the index map returned {type(out).__name__} at seq_len={n}, world_size={m}, "
                       f"not a sequence of positions ({err})") from None
    if arr.size and arr.dtype.kind not in "iu":     # (an empty list reads as floats)
        raise BadInput(f"the index map returned {arr.dtype} values at seq_len={n}, world_size={m}, "
                       "not integer positions")
    return arr.astype(np.int64)


def _first_difference(want: np.ndarray, got: np.ndarray, n: int, m: int, k: int) -> Difference | None:
    common = min(len(want), len(got))
    bad = np.flatnonzero(want[:common] != got[:common])
    if len(bad):
        i = int(bad[0])
        return Difference(n, m, i // k, i % k, int(want[i]), int(got[i]))
    if len(got) < n:
        i = len(got)
        return Difference(n, m, i // k, i % k, int(want[i]), None)
    if len(got) > n:
        # more positions than tokens: the first surplus one belongs to no rank of the layout
        return Difference(n, m, m, 0, None, int(got[n]))
    return None
