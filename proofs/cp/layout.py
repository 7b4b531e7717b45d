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


# --------------------------------------------------------------------------- any permutation

# The pseudo-targets of a balancer that is no registered layout (PyTorch's PTRR): the map must be a
# permutation, and what layout it is and its balance against head-tail's are reported
PERMUTATION = "permutation"
PERMUTATION_VARLEN = "permutation-varlen"


@dataclass(frozen=True)
class Fault:
    """Where a map is not a permutation of the n tokens in equal slices: `kind` one of "length"
    (`got` positions for n tokens), "range" (token `got` outside 0..n−1 at `rank`, `slot`),
    "duplicate" (token `got` again at `rank`, `slot`, first at `first_rank`, `first_slot`), or
    "nondeterministic" (a second call gave `got` where the first gave `expected`)."""

    where: str
    m: int
    kind: str
    rank: int | None = None
    slot: int | None = None
    expected: int | None = None
    got: int | None = None
    first_rank: int | None = None
    first_slot: int | None = None
    n: int | None = None
    lengths: tuple[int, ...] | None = None

    def __str__(self):
        at = f"{self.where}, rank {self.rank}, slot {self.slot}"
        if self.kind == "length":
            return f"{self.where}: the map returned {self.got} positions for {self.total} tokens"
        if self.kind == "range":
            return f"{at}: token {self.got} is outside the sequence 0..{self.total - 1}"
        if self.kind == "duplicate":
            return (f"{at}: token {self.got} again (first at rank {self.first_rank}, slot "
                    f"{self.first_slot}); so some token is on no rank")
        return f"{at}: a second call gave token {self.got}, the first token {self.expected}"

    @property
    def total(self) -> int:
        return self.n if self.lengths is None else sum(self.lengths)


@dataclass(frozen=True)
class Balance:
    """One size's figures: the registered layouts the map equals there (`layouts`), the pairs per
    rank its queries attend under the mask (`work`), and the same for the head-tail layout of
    the whole sequence (`head_tail`, None where 2m ∤ n) and, for packed documents, the
    per-document head-tail layout (`per_document`, None unless 2m | every L_i). `tiles`,
    `head_tail_tiles`, `per_document_tiles`: the same in flex attention's unit of work (`tiles_per_rank`),
    None where 128·m ∤ n."""

    m: int
    layouts: tuple[str, ...]
    work: tuple[int, ...]
    head_tail: tuple[int, ...] | None
    n: int | None = None
    lengths: tuple[int, ...] | None = None
    per_document: tuple[int, ...] | None = None
    tiles: tuple[int, ...] | None = None
    head_tail_tiles: tuple[int, ...] | None = None
    per_document_tiles: tuple[int, ...] | None = None

    @property
    def total(self) -> int:
        return self.n if self.lengths is None else sum(self.lengths)


def max_over_mean(work) -> float | None:
    """max / mean of the pairs per rank (1: balanced); None for no work or no layout."""
    if work is None or not sum(work):
        return None
    return max(work) * len(work) / sum(work)


@dataclass(frozen=True)
class PermutationCheck:
    """The outcome: `sizes` the sizes (lengths, m for packed documents) where the map answered
    and was checked, `refused` those where it raised, `outside` those outside its declared domain
    (not called), `rows` each checked size's `Balance`, `fault` the first non-permutation, or None."""

    target: str
    bounds: dict
    domain_text: str
    sizes: int
    refused: int
    outside: int
    rows: tuple[Balance, ...]
    fault: Fault | None

    @property
    def ok(self) -> bool:
        return self.fault is None

    def layout_counts(self) -> dict[str, int]:
        """How many checked sizes the map equals each registered layout at ("none": no layout)."""
        counts: dict[str, int] = {}
        for row in self.rows:
            for name in row.layouts or ("none",):
                counts[name] = counts.get(name, 0) + 1
        return counts


def _fault(got: np.ndarray, again: np.ndarray, total: int, m: int, where: str, **size) -> Fault | None:
    """The first way `got` (and the repeat call `again`) is not a permutation of range(total) in
    m equal slices, or None."""
    if len(got) != total:
        return Fault(where, m, "length", got=len(got), **size)
    k = total // m
    outside = np.flatnonzero((got < 0) | (got >= total))
    if len(outside):
        i = int(outside[0])
        return Fault(where, m, "range", i // k, i % k, got=int(got[i]), **size)
    _, first = np.unique(got, return_index=True)
    if len(first) != total:
        repeated = np.ones(total, dtype=bool)
        repeated[first] = False
        i = int(np.flatnonzero(repeated)[0])
        j = int(np.flatnonzero(got == got[i])[0])
        return Fault(where, m, "duplicate", i // k, i % k, got=int(got[i]), first_rank=j // k,
                     first_slot=j % k, **size)
    if len(again) != total or (again != got).any():
        i = int(np.flatnonzero(again[:total] != got[:len(again)])[0]) if len(again) >= total else \
            int(np.flatnonzero(np.append(again != got[:len(again)], True))[0])
        return Fault(where, m, "nondeterministic", i // k, i % k, int(got[i]),
                     int(again[i]) if i < len(again) else None, **size)
    return None


def _per_rank(seen: np.ndarray, positions: np.ndarray, m: int) -> tuple[int, ...]:
    return tuple(int(part.sum()) for part in np.array_split(seen[positions], m))


# flex attention's tile: a (query block, key block) pair of 128 tokens each, computed whole when any
# of its pairs is attended (the work PTRR's BlockMask counts)
TILE = 128


def tiles_per_rank(document: np.ndarray, positions, m: int) -> tuple[int, ...] | None:
    """Per rank, the non-empty 128 × 128 tiles of its queries against every key, the keys in the
    rearranged order (flex context parallelism all-gathers K and V of the rearranged sequence),
    under the document-causal mask of `document` (doc[t]: token t's document; one document: causal).
    None where 128·m ∤ n (the tiles do not fall on ranks)."""
    pos = np.asarray(positions, dtype=np.int64)
    n = len(pos)
    if m < 1 or n == 0 or n % (TILE * m):
        return None
    doc = document[pos]
    attends = (doc[:, None] == doc[None, :]) & (pos[None, :] <= pos[:, None])
    blocks = n // TILE
    occupied = attends.reshape(blocks, TILE, blocks, TILE).any(axis=(1, 3)).sum(axis=1)
    return tuple(int(x) for x in occupied.reshape(m, -1).sum(axis=1))


def _call_twice(fn, args, where: str, allowed: str):
    """fn(*args) and a second call, as positions; None when the first call raised (the map refuses
    there)."""
    try:
        out = fn(*args)
    except RingproofError as err:
        if not isinstance(err, BadInput):   # Ctrl-C, or a bug of ours
            raise
        return None
    except Exception:
        return None
    return (_call_positions(lambda: out, where, allowed),
            _call_positions(lambda: fn(*args), where, allowed))


def _check_bounds(**bounds):
    for name, value in bounds.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise BadInput(f"{name} must be a positive integer, got {value!r}")


def check_permutation(fn, max_n: int = 1024, max_m: int = 8, domain=None, domain_text: str = "") -> PermutationCheck:
    """`fn(seq_len, world_size)` at every (n, m), m | n, n ≤ max_n, m ≤ max_m (inside `domain(n, m)`
    when given, not called outside it), smallest n first: where it answers, its positions must be
    a permutation of 0..n−1 (so each rank holds n/m tokens) and a second call must return the same.
    Each such size's `Balance` under the causal mask (token t attends t + 1 keys) beside the
    head-tail layout's. BadInput when a bound is below 1 or the map answers at no size."""
    _check_bounds(max_n=max_n, max_m=max_m)
    seen_all = np.arange(1, max_n + 1, dtype=np.int64)
    zigzag = SCHEDULES["zigzag"]
    sizes = refused = outside = 0
    rows = []
    for n in range(1, max_n + 1):
        for m in range(1, min(max_m, n) + 1):
            if n % m:
                continue
            if domain is not None and not domain(n, m):
                outside += 1
                continue
            where = f"n={n}, m={m}"
            calls = _call_twice(fn, (n, m), f"seq_len={n}, world_size={m}", f"its domain: {domain_text}")
            if calls is None:
                if domain is not None:    # an adapter refusing inside its own domain: ours to fix
                    calls = _call_positions(lambda: fn(n, m), f"seq_len={n}, world_size={m}",
                                            f"its domain: {domain_text}")
                refused += 1
                continue
            sizes += 1
            got, again = calls
            fault = _fault(got, again, n, m, where, n=n)
            if fault is not None:
                return PermutationCheck(PERMUTATION, {"max_n": max_n, "max_m": max_m}, domain_text,
                                        sizes, refused, outside, tuple(rows), fault)
            P = params(n, m)
            names = tuple(dict.fromkeys(cp.layout.name for cp in SCHEDULES.values()
                                        if cp.valid(n, m) and np.array_equal(cp.positions(P), got)))
            seen, one = seen_all[:n], np.zeros(n, dtype=np.int64)
            head_tail = zigzag.positions(P) if zigzag.valid(n, m) else None
            rows.append(Balance(m, names, _per_rank(seen, got, m),
                                None if head_tail is None else _per_rank(seen, head_tail, m), n=n,
                                tiles=tiles_per_rank(one, got, m),
                                head_tail_tiles=None if head_tail is None else tiles_per_rank(one, head_tail, m)))
    if not sizes:
        raise BadInput(f"the map answered at no size within n ≤ {max_n}, m ≤ {max_m}"
                       f"{f' ({domain_text})' if domain_text else ''}: raise --max-n")
    return PermutationCheck(PERMUTATION, {"max_n": max_n, "max_m": max_m}, domain_text,
                            sizes, refused, outside, tuple(rows), None)


def document_keys_seen(lengths) -> np.ndarray:
    """seen[t]: the keys token t attends under the document-causal mask, its offset in its
    document plus one."""
    return np.concatenate([np.arange(1, length + 1, dtype=np.int64) for length in lengths])


def permutation_vectors(max_docs: int, max_len: int, step: int):
    """`lengths_vectors` with every length a multiple of `step` (T ≤ max_len), smallest first."""
    for units in lengths_vectors(max_docs, max_len // step):
        yield tuple(step * u for u in units)


def check_permutation_varlen(fn, max_docs: int = 3, max_len: int = 512, max_m: int = 4, step: int = 32,
                             domain=None, domain_text: str = "") -> PermutationCheck:
    """`fn(lengths, world_size)` at every lengths vector of at most `max_docs` documents, each a
    multiple of `step` tokens, T ≤ `max_len`, and every m ≤ `max_m` with m | T (inside `domain(T, m)`
    when given), smallest first: the same checks as `check_permutation`, the balance under the
    document-causal mask beside head-tail over the whole packed sequence (torch's default) and
    the per-document head-tail layout (zigzag-varlen)."""
    from ringproof.schedules.documents import VARLEN

    _check_bounds(max_docs=max_docs, max_len=max_len, max_m=max_m, step=step)
    if max_len > MAX_PACKED_LEN:
        raise BadInput(f"max_len {max_len} is over the limit of {MAX_PACKED_LEN} tokens")
    pairs = varlen_pairs(max_docs, max_len // step, max_m)
    if pairs > VARLEN_LIMIT:
        raise BadInput(f"max_docs={max_docs}, max_len={max_len}, max_m={max_m}, step={step} hold {pairs:,} "
                       f"(lengths, m) pairs, over the limit of {VARLEN_LIMIT:,}: lower a bound")
    bounds = {"max_docs": max_docs, "max_len": max_len, "max_m": max_m, "step": step}
    zigzag, per_document = SCHEDULES["zigzag"], VARLEN["zigzag-varlen"]
    layouts = [v for v in VARLEN.values() if not v.padded]
    sizes = refused = outside = 0
    rows = []
    for lengths in permutation_vectors(max_docs, max_len, step):
        total = sum(lengths)
        text = ",".join(map(str, lengths))
        for m in range(1, min(max_m, total) + 1):
            if total % m:
                continue
            if domain is not None and not domain(total, m):
                outside += 1
                continue
            calls = _call_twice(fn, (lengths, m), f"lengths={text}, world_size={m}", f"its domain: {domain_text}")
            if calls is None:
                if domain is not None:
                    _call_positions(lambda: fn(lengths, m), f"lengths={text}, world_size={m}",
                                    f"its domain: {domain_text}")
                refused += 1
                continue
            sizes += 1
            got, again = calls
            fault = _fault(got, again, total, m, f"lengths {text}, m={m}", lengths=lengths)
            if fault is not None:
                return PermutationCheck(PERMUTATION_VARLEN, bounds, domain_text, sizes, refused, outside,
                                        tuple(rows), fault)
            seen = document_keys_seen(lengths)
            names = tuple(v.name for v in layouts
                          if v.valid(lengths, m) and np.array_equal(v.positions(lengths, m), got))
            doc = np.repeat(np.arange(len(lengths)), lengths)
            head_tail = zigzag.positions(params(total, m)) if zigzag.valid(total, m) else None
            own = per_document.positions(lengths, m) if per_document.valid(lengths, m) else None
            rows.append(Balance(
                m, names, _per_rank(seen, got, m), None if head_tail is None else _per_rank(seen, head_tail, m),
                lengths=lengths, per_document=None if own is None else _per_rank(seen, own, m),
                tiles=tiles_per_rank(doc, got, m),
                head_tail_tiles=None if head_tail is None else tiles_per_rank(doc, head_tail, m),
                per_document_tiles=None if own is None else tiles_per_rank(doc, own, m)))
    if not sizes:
        raise BadInput(f"the map answered at no (lengths, m) within D ≤ {max_docs}, T ≤ {max_len}, "
                       f"m ≤ {max_m}, lengths multiples of {step}"
                       f"{f' ({domain_text})' if domain_text else ''}: raise --max-len")
    return PermutationCheck(PERMUTATION_VARLEN, bounds, domain_text, sizes, refused, outside, tuple(rows), None)
