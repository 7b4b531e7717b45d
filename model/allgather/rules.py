"""The all-gather machine's rules, written once: what its model, prover and twins assume.

m ranks, rank r holding the contiguous chunk r of S = T/m tokens. Forward: one all-gather of K and
V before any compute (`BEFORE`); the gathered buffer holds the chunks in rank order, so its row t
is token t (`chunk`). Backward: the same all-gather, then, after the compute, one reduce-scatter of
the T-row dK and dV buffers (`AFTER_BACKWARD`): rank r receives the sum over ranks of rows
chunk(r). Nothing else moves. The kernel (flash-attn's varlen causal) runs each segment (queries
[q_lo, q_hi), keys [k_lo, k_hi)) with its causal mask aligned bottom-right (`kernel_sees`,
written beside the targets' formulas in schedules/allgather.py, the layer below).
Every formula here is written with the DSL helpers: the model (ints, numpy) and the prover (Z3)
evaluate the same one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ringproof.schedules.allgather import kernel_sees  # noqa: F401  (the kernel's mask, a rule here)


@dataclass(frozen=True)
class Collective:
    """One collective: its kind and the arrays it moves (each T·d in all, S·d per rank)."""

    kind: str          # "all-gather" | "reduce-scatter"
    arrays: tuple


BEFORE = (Collective("all-gather", ("k", "v")),)              # forward and backward, before compute
AFTER_BACKWARD = (Collective("reduce-scatter", ("dk", "dv")),)  # after the backward's compute


def chunk(S, r):
    """(first, end) token of rank r's chunk in a gathered or reduce-scattered buffer."""
    return r * S, (r + 1) * S


def memory(T, S, d, backward: bool) -> dict:
    """Data held per rank by array: the gathered K, V (T·d each), its own q and out (S·d); the
    backward adds dout and dq (S·d), the dK, dV buffers before the reduce-scatter (T·d each) and
    its home dk, dv after it (S·d each)."""
    held = {"k gathered": T * d, "v gathered": T * d, "q": S * d, "out": S * d}
    if backward:
        held.update({"dout": S * d, "dq": S * d, "dk buffer": T * d, "dv buffer": T * d,
                     "dk home": S * d, "dv home": S * d})
    return held
