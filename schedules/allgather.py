"""All-gather context parallelism (Llama 3): the targets `llama3` and `llama3-varlen`.

Rank r of m holds the contiguous tokens [rS, (r + 1)S), S = T/m (side condition m | T). It
gathers every rank's K and V (model/allgather/rules.py), then runs its queries as **segments**, one
per document meeting its range, as ring-flash-attn's `llama3_flash_attn_prepare_cu_seqlens`
computes them: the segment's queries are the document's tokens inside the rank, clipped at the
rank's first token and at its end ([max(c, lo), min(c + L, hi))); its keys run from the document's
start to the segment's end ([c, min(c + L, hi))). `llama3` is the single causal sequence (one
document of T tokens); `llama3-varlen` any lengths vector, documents crossing ranks.

The formulas, each written with the DSL helpers (ints, numpy, Z3 alike): `lo(P, r)`, `hi(P, r)`
the rank's range (P: T, m, S); `meets(R, C)` whether document C (c, L, i) gets a segment on rank
R (lo, hi, r); `q_lo, q_hi, k_lo, k_hi (R, C)` the segment's ranges.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Callable

from ringproof.errors import BadInput
from ringproof.schedules.documents import cu_seqlens
from ringproof.schedules.expr import and_, ite, le, lt


def kernel_sees(q_lo, q_hi, k_lo, k_hi, q, k):
    """Whether the causal varlen kernel computes (q, k) in the segment: k in [k_lo, k_hi) and
    k − k_lo ≤ (q − q_lo) + (k_hi − k_lo) − (q_hi − q_lo), flash-attn's bottom-right alignment."""
    return and_(le(k_lo, k), lt(k, k_hi), le(k - k_lo, (q - q_lo) + (k_hi - k_lo) - (q_hi - q_lo)))



def _max(a, b):
    return ite(le(a, b), b, a)


def _min(a, b):
    return ite(le(a, b), a, b)


def _lo(P, r):
    return r * P.S


def _hi(P, r):
    return (r + 1) * P.S


def _meets(R, C):
    """The documents of cu_seqlens[left : right + 1]: those with a token in [lo, hi)."""
    return and_(lt(C.c, R.hi), lt(R.lo, C.c + C.L))


def _q_lo(R, C):
    return _max(C.c, R.lo)                 # cu_seqlens_q[0] = 0: clipped at the rank's first token


def _q_hi(R, C):
    return _min(C.c + C.L, R.hi)           # cu_seqlens_q[-1] = S: clipped at the rank's end


def _k_lo(R, C):
    return C.c                             # local_k_slice from the first document's start


def _k_hi(R, C):
    return _min(C.c + C.L, R.hi)           # causal: cu_seqlens_k[-1] = the rank's end


@dataclass(frozen=True)
class AllGather:
    """One all-gather target: its formulas (module docstring), `single` (one document: `llama3`)."""

    name: str
    single: bool
    doc: str
    lo: Callable = field(default=_lo, compare=False)
    hi: Callable = field(default=_hi, compare=False)
    meets: Callable = field(default=_meets, compare=False)
    q_lo: Callable = field(default=_q_lo, compare=False)
    q_hi: Callable = field(default=_q_hi, compare=False)
    k_lo: Callable = field(default=_k_lo, compare=False)
    k_hi: Callable = field(default=_k_hi, compare=False)
    causal: bool = True

    @property
    def requires_text(self) -> str:
        return "m | T" if self.single else "m | T = Σ L_i"

    def valid(self, lengths, m: int) -> bool:
        if m < 1 or not lengths or any(length < 1 for length in lengths):
            return False
        return (len(lengths) == 1 or not self.single) and sum(lengths) % m == 0

    def check(self, lengths, m: int) -> None:
        """BadInput (one line) unless the packing is one the target is defined for."""
        if self.single and len(lengths) != 1:
            raise BadInput(f"{self.name} is one sequence: give -n T (or --lengths T), not {len(lengths)} documents")
        if not self.valid(lengths, m):
            raise BadInput(f"{self.name} needs {self.requires_text}: T = {sum(lengths)}, m = {m}")

    def sizes(self, lengths, m: int) -> SimpleNamespace:
        T = sum(lengths)
        return SimpleNamespace(T=T, m=m, S=T // m)

    def rank(self, P, r) -> SimpleNamespace:
        """Rank r's record: its index and range, from the formulas."""
        return SimpleNamespace(r=r, lo=self.lo(P, r), hi=self.hi(P, r))

    def documents(self, lengths) -> list[SimpleNamespace]:
        cu = cu_seqlens(lengths)
        return [SimpleNamespace(c=cu[i], L=int(L), i=i + 1) for i, L in enumerate(lengths)]

    def segments(self, lengths, m: int, r: int) -> list[tuple[int, int, int, int, int]]:
        """(document index, q_lo, q_hi, k_lo, k_hi) of rank r's segments, in document order."""
        P = self.sizes(lengths, m)
        R = self.rank(P, r)
        return [(C.i, int(self.q_lo(R, C)), int(self.q_hi(R, C)), int(self.k_lo(R, C)), int(self.k_hi(R, C)))
                for C in self.documents(lengths) if self.meets(R, C)]

    def prepare_cu_seqlens(self, lengths, m: int, r: int):
        """(cu_seqlens_q, cu_seqlens_k, local_k_slice) of rank r, as the library's function returns
        them: q offsets relative to the rank's first token, k offsets to the slice's start."""
        segs = self.segments(lengths, m, r)
        start = segs[0][3] if segs else 0
        cu_q, cu_k = [0], [0]
        for _, qa, qb, ka, kb in segs:
            cu_q.append(cu_q[-1] + qb - qa)
            cu_k.append(kb - start)
        return tuple(cu_q), tuple(cu_k), (start, segs[-1][4] if segs else 0)

    def expected_pairs(self, lengths, m: int) -> set[tuple[int, int, int]]:
        """(rank, query, key) of every pair the target computes (0-based tokens): what a recording
        run of the library (`prove conform`) must show, per head group."""
        out = set()
        for r in range(m):
            for _, qa, qb, ka, kb in self.segments(lengths, m, r):
                out |= {(r, q, k) for q in range(qa, qb) for k in range(ka, kb) if kernel_sees(qa, qb, ka, kb, q, k)}
        return out


ALLGATHER = {t.name: t for t in (
    AllGather("llama3", True, "one causal sequence of T tokens, rank r holds [rS, (r + 1)S); every rank "
              "gathers all of K and V, computes its queries, reduce-scatters dk, dv (the Llama 3 paper's "
              "context parallelism)"),
    AllGather("llama3-varlen", False, "packed documents, per-document causal; rank r holds [rS, (r + 1)S), "
              "documents cross ranks; one segment per (rank, document) through per-rank cu_seqlens "
              "(ring-flash-attn's llama3_flash_attn_varlen_func)"),
)}


def allgather(name: str) -> AllGather | None:
    """The all-gather target of a name, or None."""
    return ALLGATHER.get(name)


def mutant(name: str, **formulas) -> AllGather:
    """`llama3-varlen` with some formulas replaced (tests, docs)."""
    return replace(ALLGATHER["llama3-varlen"], name=name, **formulas)
