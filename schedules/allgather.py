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

import numpy as np

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


DEFAULTS = {"lo": _lo, "hi": _hi, "meets": _meets, "q_lo": _q_lo, "q_hi": _q_hi, "k_lo": _k_lo, "k_hi": _k_hi}
FORMULAS = {"lo": "(P, r)", "hi": "(P, r)", "meets": "(R, C)", "q_lo": "(R, C)", "q_hi": "(R, C)",
            "k_lo": "(R, C)", "k_hi": "(R, C)"}     # each formula's arguments
assert set(DEFAULTS) == set(FORMULAS)


@dataclass(frozen=True)
class AllGather:
    """One all-gather schedule: its formulas (module docstring; each given replaces the default),
    `single` (one document: `llama3`). A schedule file may assign `SCHEDULE = AllGather(...)` with
    formulas of its own; `prove FILE` proves it as the registered targets are proved."""

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

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or len(self.name) > 80 or "\n" in self.name:
            raise BadInput(f"AllGather: name must be a one-line string of 1..80 characters, got {self.name!r:.60}")
        if not isinstance(self.single, bool):
            raise BadInput(f"AllGather {self.name}: single must be True (one sequence) or False (packed documents), "
                           f"got {self.single!r:.40}")
        if not isinstance(self.doc, str):
            raise BadInput(f"AllGather {self.name}: doc must be a string, got {self.doc!r:.40}")
        for name in FORMULAS:
            if not callable(getattr(self, name)):
                raise BadInput(f"AllGather {self.name}: {name} must be a function {FORMULAS[name]}, "
                               f"got {getattr(self, name)!r:.40}")
        if self.causal is not True:
            raise BadInput(f"AllGather {self.name}: only the causal kernel is modelled (causal=True), got {self.causal!r:.40}")

    def __repr__(self) -> str:
        own = [f"{k}=<{getattr(self, k).__name__}>" for k, default in DEFAULTS.items() if getattr(self, k) is not default]
        return f"AllGather({', '.join([repr(self.name), repr(self.single), repr(self.doc), *own])})"

    def source(self) -> str | None:
        """The file that defines this schedule's own formulas (a user's schedule file), or None."""
        import os

        ours = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for name in self.own_formulas():
            code = getattr(getattr(self, name), "__code__", None)
            if code is not None and not os.path.abspath(code.co_filename).startswith(ours + os.sep):
                return code.co_filename
        return None

    def own_formulas(self) -> list[str]:
        """The formulas this schedule gives itself (not the library's defaults)."""
        return [k for k, default in DEFAULTS.items() if getattr(self, k) is not default]

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
        """Rank r's record: its index and range, from the formulas (ints where P is)."""
        lo, hi = self.lo(P, r), self.hi(P, r)
        if isinstance(r, int):
            lo, hi = self._int("lo", lo), self._int("hi", hi)
        return SimpleNamespace(r=r, lo=lo, hi=hi)

    def _int(self, name: str, value) -> int:
        """A formula's value at concrete sizes: an int, or BadInput naming the formula."""
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise BadInput(f"AllGather {self.name}: {name}{FORMULAS[name]} gave {value!r:.40} at concrete sizes, "
                           "not an int (write it with the DSL helpers: div, mod, ite, ...)")
        return int(value)

    def documents(self, lengths) -> list[SimpleNamespace]:
        cu = cu_seqlens(lengths)
        return [SimpleNamespace(c=cu[i], L=int(L), i=i + 1) for i, L in enumerate(lengths)]

    def segments(self, lengths, m: int, r: int) -> list[tuple[int, int, int, int, int]]:
        """(document index, q_lo, q_hi, k_lo, k_hi) of rank r's segments, in document order."""
        P = self.sizes(lengths, m)
        R = self.rank(P, r)
        return [(C.i, *(self._int(k, getattr(self, k)(R, C)) for k in ("q_lo", "q_hi", "k_lo", "k_hi")))
                for C in self.documents(lengths) if bool(self.meets(R, C))]

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
