"""Packed sequences: documents of any lengths in one sequence, attended within each document.

A packing is a lengths vector L_1..L_D (`cu_seqlens` are its prefix sums c_0 = 0, c_i = c_{i−1} +
L_i, T = c_D). A varlen schedule lays every document out with a single-sequence layout of
`context_parallel` (its `base`) at the document's offset, and rank r holds, in local order, its
slots of document 1, then of document 2, …: rank r's slot j of document i is token
c_i + base.layout.token(P_i, r, j) with P_i the sizes of a sequence of L_i tokens on m ranks. The
mask is document-causal: query q sees key k iff doc(q) = doc(k) and k ≤ q (document-local, without
k ≤ q, where the base is not causal).

`padded`: documents of any real length ℓ_i, each padded to the next multiple of the base's unit
(cu_seqlens_padded beside the real cu_seqlens); positions are in the padded sequence, and a padded
token attends and is attended by nothing.

`VARLEN` is the one table of varlen schedules; each row names its base, so every formula here is
the single-sequence one, evaluated per document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable

import numpy as np

from ringproof.errors import BadInput
from ringproof.schedules.context_parallel import SCHEDULES, ContextParallel
from ringproof.schedules.expr import and_, eq, le, lt


def cu_seqlens(lengths) -> tuple[int, ...]:
    """The prefix sums (0, L_1, L_1 + L_2, …, T) of a lengths vector."""
    out = [0]
    for length in lengths:
        out.append(out[-1] + int(length))
    return tuple(out)


def parse_lengths(text: str) -> tuple[int, ...]:
    """`"4,8,4"` as a lengths vector; BadInput (one line) for anything but positive integers."""
    parts = [p.strip() for p in str(text).split(",")]
    try:
        lengths = tuple(int(p) for p in parts)
    except ValueError:
        raise BadInput(f"--lengths {text[:80]!r}: expected comma-separated positive integers, e.g. 4,8,4") from None
    if not lengths or any(length < 1 for length in lengths):
        raise BadInput(f"--lengths {text[:80]!r}: every document length must be at least 1")
    return lengths


def document(base: ContextParallel, n, m, *, c, o, i, D, d=None, real=None, **derived) -> SimpleNamespace:
    """The record a varlen formula sees for one document: the base's sizes of a sequence of `n`
    tokens on m ranks (n, m, k = n/m, d, kd and the base's derived sizes, e.g. zigzag's h; given in
    `derived` they are taken as they are, as the prover's symbols), its offset `c` (its first token
    in the packed sequence), `o` (its first local slot on every rank: the slots of the documents
    before it), its 1-based index `i` of `D` documents and `real` (its real length, n unless padded).
    Ints for a concrete packing; Z3 or sympy values for the proof of a generic document."""
    if derived or not isinstance(n, int):
        P = SimpleNamespace(n=n, m=m, d=n if d is None else d, **derived)
    else:
        P = SimpleNamespace(**vars(base.params(n, m, d=d)))
    for name, value in dict(c=c, o=o, i=i, D=D, real=n if real is None else real).items():
        setattr(P, name, value)
    return P


def _token(base):
    return lambda P, r, j: P.c + base.layout.token(P, r, j)


def _owner(base):
    return lambda P, t: base.layout.owner(P, t - P.c)


def _slot(base):
    return lambda P, t: P.o + base.layout.slot(P, t - P.c)


def _mask(base, padded):
    """Document-causal (document-local where the base has no mask); padded: real tokens only."""
    def mask(Q, K, q, k):
        same = eq(Q.i, K.i)
        seen = and_(same, le(k, q)) if base.causal else same
        return and_(seen, lt(q - Q.c, Q.real), lt(k - K.c, K.real)) if padded else seen
    return mask


@dataclass(frozen=True)
class Varlen:
    """One varlen schedule: a single-sequence `base` laid out per document; `padded`: documents
    of any length padded to the base's unit, the padding masked out.

    Its formulas, each of a document's record (`document`) and written with the DSL helpers:
    `token(P, r, j)` the packed token in rank r's slot j of the document (0-based, j < P.k),
    `owner(P, t)` and `slot(P, t)` of a packed token t of the document (the slot in the rank's
    local order, documents one after another: P.o + the slot within the document), `mask(Q, K, q,
    k)` whether query token q (of document record Q) sees key token k (of K). Not given: the
    base's layout at the document's offset and the document-causal mask. The prover shows each is
    the base's shifted (proofs/varlen), so the base's proof holds per document."""

    name: str
    base: ContextParallel
    padded: bool
    doc: str
    token: Callable | None = field(default=None, compare=False)
    owner: Callable | None = field(default=None, compare=False)
    slot: Callable | None = field(default=None, compare=False)
    mask: Callable | None = field(default=None, compare=False)
    backward: bool = False            # the backward pass of the base (NAME-bwd)

    def __post_init__(self):
        for name, default in (("token", _token), ("owner", _owner), ("slot", _slot)):
            if getattr(self, name) is None:
                object.__setattr__(self, name, default(self.base))
        if self.mask is None:
            object.__setattr__(self, "mask", _mask(self.base, self.padded))

    @property
    def causal(self) -> bool:
        return self.base.causal

    def unit(self, m: int) -> int:
        """Every (padded) document length is a multiple of it."""
        return self.base.unit(m)

    @property
    def requires_text(self) -> str:
        unit = self.base.requires_text.replace(" | n", " | L_i")
        return "any L_i ≥ 1 (each padded to a multiple of " + unit.split(" |")[0] + ")" if self.padded \
            else unit + " for every document i"

    def valid(self, lengths, m: int) -> bool:
        """Whether the side condition holds (always, for a padded schedule)."""
        if m < 1 or not lengths or any(length < 1 for length in lengths):
            return False
        return self.padded or all(length % self.unit(m) == 0 for length in lengths)

    def padded_lengths(self, lengths, m: int) -> tuple[int, ...]:
        """Each length rounded up to the unit (itself where the schedule is not padded)."""
        if not self.padded:
            return tuple(lengths)
        u = self.unit(m)
        return tuple(-(-length // u) * u for length in lengths)

    def positions(self, lengths, m: int) -> np.ndarray:
        """Every rank's tokens in local order, rank after rank (0-based, in the padded sequence
        where the schedule pads): what a varlen index map returns."""
        if not self.valid(lengths, m):
            raise BadInput(f"{self.name} needs {self.requires_text}: lengths {','.join(map(str, lengths))}, m={m}")
        records = self.documents(lengths, m)
        per_rank = [np.asarray(self.token(P, r, np.arange(P.k, dtype=np.int64)), dtype=np.int64)
                    for r in range(m) for P in records]
        return np.concatenate(per_rank) if per_rank else np.zeros(0, dtype=np.int64)

    def documents(self, lengths, m: int, d: int | None = None) -> list[SimpleNamespace]:
        """Each document's record (`document`) in a packing: its (padded) length, offset, first
        local slot, index and real length."""
        full = self.padded_lengths(lengths, m)
        cu, out, o = cu_seqlens(full), [], 0
        for i, (length, real) in enumerate(zip(full, lengths)):
            out.append(document(self.base, length, m, c=cu[i], o=o, i=i + 1, D=len(full), d=d, real=real))
            o += length // m
        return out

    def keys_seen(self, lengths, m: int) -> np.ndarray:
        """seen[t]: how many keys (padded) token t attends under the document mask (0 for padding):
        the real tokens of its document up to itself (all of them where the base is not causal)."""
        full = self.padded_lengths(lengths, m)
        seen = []
        for f, length in zip(full, lengths):
            local = np.arange(f, dtype=np.int64)
            row = np.minimum(local + 1, length) if self.causal else np.full(f, length, dtype=np.int64)
            seen.append(np.where(local < length, row, 0))
        return np.concatenate(seen) if seen else np.zeros(0, dtype=np.int64)

    def load(self, lengths, m: int, positions) -> tuple[int, ...]:
        """Pairs (query, key) per rank under the document mask when rank r holds slice r of
        `positions` (any positions: one outside the sequence counts none): a layout's balance."""
        seen = self.keys_seen(lengths, m)
        pos = np.asarray(positions, dtype=np.int64).reshape(-1)
        inside = (pos >= 0) & (pos < len(seen))
        per_token = np.where(inside, seen[np.clip(pos, 0, max(len(seen) - 1, 0))] if len(seen) else 0, 0)
        return tuple(int(part.sum()) for part in np.array_split(per_token, m))

    def document(self, lengths, m: int) -> np.ndarray:
        """doc[t]: the 0-based document of (padded) token t."""
        full = self.padded_lengths(lengths, m)
        return np.repeat(np.arange(len(full)), full)

    def real(self, lengths, m: int) -> np.ndarray:
        """real[t]: whether (padded) token t is a real token, not padding."""
        full = self.padded_lengths(lengths, m)
        return np.concatenate([np.arange(f) < length for f, length in zip(full, lengths)]) \
            if full else np.zeros(0, dtype=bool)

    def computes(self, lengths, m: int, query: int, key: int) -> bool:
        """Whether the schedule computes the pair (query token, key token), 0-based, padded: its
        `mask` at the two tokens' documents."""
        records, doc = self.documents(lengths, m), self.document(lengths, m)
        return bool(self.mask(records[doc[query]], records[doc[key]], query, key))


VARLEN = {v.name: v for v in (
    Varlen("ring-attention-varlen", SCHEDULES["ring-attention-causal"], False,
           "each document cut into m equal chunks, rank r holds chunk r of every document, "
           "document-causal (ring-flash-attn's ring_flash_attn_varlen_func)"),
    Varlen("zigzag-varlen", SCHEDULES["zigzag"], False,
           "per-document head-tail: rank r holds chunks r and 2m−1−r of every document, each of "
           "L_i/(2m) tokens, document-causal (zigzag_ring_flash_attn_varlen_func, TransformerEngine's "
           "THD format)"),
    Varlen("zigzag-varlen-padded", SCHEDULES["zigzag"], True,
           "zigzag-varlen over documents of any real lengths, each padded to the next multiple of "
           "2m (cu_seqlens_padded beside cu_seqlens); a padded token attends and is attended by "
           "nothing"),
)}


def varlen(name: str) -> Varlen | None:
    """The varlen schedule of a target name (NAME-bwd: its backward pass), or None."""
    from dataclasses import replace

    row = VARLEN.get(name.removesuffix("-bwd"))
    return replace(row, name=name, backward=True) if row is not None and name.endswith("-bwd") else row
