"""A load balancer's index map against a context-parallel target's layout, at every valid size.

The map is a function `(seq_len, world_size) -> positions`: n 0-based token positions whose
consecutive n/m slices are the tokens of ranks 0..m−1 in local order (PyTorch's context-parallel
load balancers return exactly this). It is called for every (n, m) with m ≤ max_m, n ≤ max_n that
the target allows (its `requires`), smallest n first, and compared slot by slot with the target's
layout formula.

A varlen map is a function `(lengths, world_size) -> positions` over a packed sequence of
documents (schedules/documents.py): called for every lengths vector within the bounds and every
world size, compared with the per-document layout where the side condition holds and required to
raise where it does not, smallest vector first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ringproof.errors import BadInput, Interrupted, RingproofError
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
    return _call_positions(lambda: fn(n, m), f"seq_len={n}, world_size={m}", allowed)


def _call_positions(call, where: str, allowed: str) -> np.ndarray:
    """What `call()` returns as int64 positions; BadInput (one line naming `where`) when it raises
    or returns something else."""
    try:
        out = call()
    except RingproofError as err:
        if not isinstance(err, BadInput):   # Ctrl-C, or a bug of ours
            raise
        raise BadInput(f"the index map raised at {where} ({allowed}): {err}") from None
    except Exception as err:   # the user's function: any failure is bad input, in one line
        raise BadInput(f"the index map raised at {where} ({allowed}): "
                       f"{type(err).__name__}: {err}") from None
    try:
        arr = np.asarray(out).reshape(-1)
    except Exception as err:
        raise BadInput(f"the index map returned {type(out).__name__} at {where}, "
                       f"not a sequence of positions ({err})") from None
    if arr.size and arr.dtype.kind not in "iu":     # (an empty list reads as floats)
        raise BadInput(f"the index map returned {arr.dtype} values at {where}, "
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


# --------------------------------------------------------------------------- packed sequences

# (lengths, world size) pairs a varlen check may call the map at, refused before any call beyond it
VARLEN_LIMIT = 1_000_000
# and the longest packed sequence (T = L_1 + … + L_D) it may ask for
MAX_PACKED_LEN = 4096


@dataclass(frozen=True)
class VarlenDifference:
    """The first (lengths, m) where a varlen map and the layout disagree: a slot (`rank`, `slot`;
    None for a slot one side lacks) with each side's pairs per rank under the document mask, or,
    where the side condition fails, a map that answered (`answered`: how many positions it gave)
    instead of refusing."""

    lengths: tuple[int, ...]
    m: int
    rank: int | None = None
    slot: int | None = None
    expected: int | None = None
    got: int | None = None
    load_expected: tuple[int, ...] | None = None
    load_got: tuple[int, ...] | None = None
    document_expected: int | None = None     # 1-based documents of the two tokens (None: no token,
    document_got: int | None = None          # or one outside the sequence)
    answered: int | None = None
    requires: str = ""

    @property
    def where(self) -> str:
        return f"lengths {','.join(map(str, self.lengths))}, m={self.m}"

    def __str__(self):
        if self.answered is not None:
            return (f"{self.where}: outside the side condition ({self.requires}) the map returned "
                    f"{self.answered} positions; it must refuse (raise) there")

        def of(doc):
            return "" if doc is None else f" (document {doc})"

        want = "no slot" if self.expected is None else f"token {self.expected}{of(self.document_expected)}"
        got = "nothing (too few positions)" if self.got is None else f"token {self.got}{of(self.document_got)}"
        return (f"{self.where}, rank {self.rank}, slot {self.slot}: the layout has {want}, the map {got}; "
                f"pairs per rank (document mask): the layout {', '.join(map(str, self.load_expected))}, "
                f"the map {', '.join(map(str, self.load_got))}")


@dataclass(frozen=True)
class VarlenLayoutCheck:
    """The outcome: `vectors` (lengths, m) pairs inside the side condition compared, `refused` pairs
    outside it where the map refused, `difference` the first disagreement, or None."""

    target: str
    max_docs: int
    max_len: int
    max_m: int
    vectors: int
    refused: int
    difference: VarlenDifference | None

    @property
    def ok(self) -> bool:
        return self.difference is None


def lengths_vectors(max_docs: int, max_len: int):
    """Every lengths vector (L_1, …, L_D), L_i ≥ 1, D ≤ max_docs, T = ΣL_i ≤ max_len, smallest
    first: by D, then T, then the lengths themselves."""
    from itertools import combinations

    for docs in range(1, min(max_docs, max_len) + 1):
        for total in range(docs, max_len + 1):
            for cuts in combinations(range(1, total), docs - 1):
                bounds = (0, *cuts, total)
                yield tuple(b - a for a, b in zip(bounds, bounds[1:]))


def varlen_pairs(max_docs: int, max_len: int, max_m: int) -> int:
    """How many (lengths, m) pairs the bounds hold: Σ_D C(max_len, D) vectors, each at m = 1..max_m."""
    from math import comb

    return max_m * sum(comb(max_len, docs) for docs in range(1, min(max_docs, max_len) + 1))


def check_varlen_layout(fn, target: str, max_docs: int = 3, max_len: int = 64, max_m: int = 4) -> VarlenLayoutCheck:
    """`fn(lengths, world_size)` against a varlen `target`'s layout at every lengths vector with
    at most `max_docs` documents and T ≤ `max_len` tokens, for every world size ≤ `max_m`.

    Where the target's side condition holds, fn returns the 0-based positions (in the padded
    sequence where the target pads) whose consecutive slices are ranks 0..m−1's tokens, compared
    slot by slot; where it fails, fn must raise: a layout returned there is a difference. Pairs
    in order of D, T, the lengths, then m, so the first difference is a smallest one.
    BadInput when the target has no varlen layout, a bound is out of range, or fn raises (or
    returns no positions) where the side condition holds (the CLI's exit 64)."""
    from ringproof.schedules.documents import VARLEN, varlen

    v = varlen(target)
    if v is None:
        raise BadInput(f"{target!r} has no varlen layout: expected one of {', '.join(VARLEN)}")
    for name, value in (("max_docs", max_docs), ("max_len", max_len), ("max_m", max_m)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise BadInput(f"{name} must be a positive integer, got {value!r}")
    if max_len > MAX_PACKED_LEN:
        raise BadInput(f"max_len {max_len} is over the limit of {MAX_PACKED_LEN} tokens")
    pairs = varlen_pairs(max_docs, max_len, max_m)
    if pairs > VARLEN_LIMIT:
        raise BadInput(f"max_docs={max_docs}, max_len={max_len}, max_m={max_m} hold {pairs:,} (lengths, m) "
                       f"pairs, over the limit of {VARLEN_LIMIT:,}: lower a bound")
    vectors = refused = 0
    for lengths in lengths_vectors(max_docs, max_len):
        for m in range(1, max_m + 1):
            where = f"lengths={','.join(map(str, lengths))}, world_size={m}"
            if not v.valid(lengths, m):
                try:
                    out = fn(lengths, m)
                except Interrupted:
                    raise
                except Exception:    # the map refused, as it must here
                    refused += 1
                    continue
                answered = _answer_size(out)
                return VarlenLayoutCheck(target, max_docs, max_len, max_m, vectors, refused,
                                         VarlenDifference(lengths, m, answered=answered, requires=v.requires_text))
            vectors += 1
            got = _call_positions(lambda: fn(lengths, m), where,
                                  f"lengths {target} allows: {v.requires_text}")
            want = v.positions(lengths, m)
            diff = _first_difference(want, got, len(want), m, len(want) // m)
            if diff is not None:
                doc = v.document(lengths, m)

                def document(token):
                    return None if token is None or not 0 <= token < len(doc) else int(doc[token]) + 1

                return VarlenLayoutCheck(target, max_docs, max_len, max_m, vectors, refused, VarlenDifference(
                    lengths, m, diff.rank, diff.slot, diff.expected, diff.got,
                    v.load(lengths, m, want), v.load(lengths, m, got),
                    document(diff.expected), document(diff.got), requires=v.requires_text))
    return VarlenLayoutCheck(target, max_docs, max_len, max_m, vectors, refused, None)


def _answer_size(out) -> int:
    try:
        return int(np.asarray(out).size)
    except Exception:
        return 1
