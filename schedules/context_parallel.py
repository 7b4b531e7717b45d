"""Context parallelism: the token layouts and ring steps of the schedules LLM training runs.

A ring of m ranks (GPUs as PEs) splits a sequence of n tokens; rank r holds n/m tokens in a local
order (its slots). Queries stay home; the K/V blocks travel one hop per ring step, so at step s
(0 ≤ s < m) rank r holds the K/V block of rank (r − s) mod m and computes the pairs (query, key)
of its queries with that block that the mask allows. The backward pass walks the same ring with
dK/dV travelling beside K/V and one more hop bringing them home.

The layouts (0-based rank r and slot j; k = n/m, h = n/(2m)):

    contiguous  token r·k + j                                   (Ring Attention; m | n)
    striped     token j·m + r                                   (Brandon et al.; m | n)
    zigzag      token r·h + j for j < h, else (2m−1−r)·h + j − h (head-tail; 2m | n)

Every formula is written with the DSL's helpers, so it runs on ints and numpy arrays alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ringproof.schedules.expr import div, eq, ite, le, lt, mod


def _contiguous(P, r, j):
    return r * P.k + j


def _striped(P, r, j):
    return j * P.m + r


def _zigzag(P, r, j):
    h = div(P.n, 2 * P.m)
    return ite(lt(j, h), r * h + j, (2 * P.m - 1 - r) * h + j - h)


@dataclass(frozen=True)
class ContextParallel:
    """One context-parallel schedule: its layout, its mask and its side condition.

    `token(P, r, j)`: the 0-based token in slot j of rank r; `requires(P)`: the side condition on
    the sizes beyond m | n (a DSL condition), `requires_text` the same for people; `unit(m)`: the
    least n it allows for m ranks (every valid n is a multiple of it)."""

    name: str
    layout: str
    token: Callable
    causal: bool
    requires: Callable
    requires_text: str
    unit: Callable
    doc: str

    def valid(self, n: int, m: int) -> bool:
        return n >= 1 and m >= 1 and n % self.unit(m) == 0

    def positions(self, P):
        """The tokens of every rank in local order, rank after rank: what a load balancer's index
        map returns (numpy, 0-based)."""
        import numpy as np

        r, j = np.divmod(np.arange(P.n, dtype=np.int64), P.k)
        return self.token(P, r, j)

    def held(self, P, r, s):
        """The rank whose K/V block rank r holds at ring step s (0-based)."""
        return mod(r - s, P.m)

    def computes(self, P, query, key):
        """Whether the pair (query token, key token) is one the schedule computes."""
        return le(key, query) if self.causal else True


def _multiple_of_m(m):
    return m


def _multiple_of_2m(m):
    return 2 * m


def _always(P):
    return True


def _two_m_divides_n(P):
    return eq(mod(P.n, 2 * P.m), 0)


SCHEDULES = {s.name: s for s in (
    ContextParallel("ring-attention", "contiguous", _contiguous, False, _always, "m | n", _multiple_of_m,
                    "Ring Attention (Liu, Zaharia, Abbeel 2023): contiguous blocks, no mask"),
    ContextParallel("ring-attention-causal", "contiguous", _contiguous, True, _always, "m | n",
                    _multiple_of_m, "Ring Attention with the causal mask: contiguous blocks, "
                    "imbalanced (rank r computes more pairs than rank r − 1)"),
    ContextParallel("striped", "striped", _striped, True, _always, "m | n", _multiple_of_m,
                    "Striped attention (Brandon et al. 2023): token t on rank t mod m, causal"),
    ContextParallel("zigzag", "zigzag", _zigzag, True, _two_m_divides_n, "2m | n", _multiple_of_2m,
                    "zigzag / head-tail: 2m chunks of n/(2m) tokens, rank r holds chunks r and "
                    "2m−1−r in that order, causal"),
)}


def schedule(name: str) -> ContextParallel | None:
    """The context-parallel schedule of a target name (its `-bwd` twin shares it), or None."""
    return SCHEDULES.get(name.removesuffix("-bwd"))
