"""The all-gather machine's rules, written once: what its model, prover and twins assume.

m ranks, rank r holding the contiguous chunk r of S = T/m tokens. Heads: H query heads, Hk KV
heads (GQA: Hk | H, query head h reads KV head h // (H/Hk)), gathered s = heads_k_stride KV heads
at a time (s | Hk): G = Hk/s **head groups**, run one after another. Group g gathers KV heads
[gs, (g + 1)s) (`group_kv`) and computes the query heads [gsH/Hk, (g + 1)sH/Hk) (`group_q`, the
library's `q_slice`). Forward: per group, one all-gather of K and V (`BEFORE`) into a T-row buffer
whose row t is token t (`chunk`); the next group's arrives into a second buffer while this one is
computed (two buffers, as `llama3_flash_attn_varlen_forward` allocates them). Backward: the same
all-gathers, then per group one reduce-scatter of the T-row dK and dV buffer (`AFTER_BACKWARD`):
rank r receives the sum over ranks of rows chunk(r). Nothing else moves. The kernel (flash-attn's
varlen causal) runs each segment (queries [q_lo, q_hi), keys [k_lo, k_hi)) with its causal mask
aligned bottom-right (`kernel_sees`, written beside the targets' formulas in
schedules/allgather.py, the layer below). `memory` is what a rank holds at its peak: a call
allocates these arrays and frees none before it returns.
Every formula here is written with the DSL helpers: the model (ints, numpy) and the prover (Z3)
evaluate the same one.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from ringproof.errors import BadInput
from ringproof.schedules.allgather import kernel_sees  # noqa: F401  (the kernel's mask, a rule here)
from ringproof.schedules.expr import div


@dataclass(frozen=True)
class Collective:
    """One collective: its kind and the arrays it moves (each T·s·d per head group, S·s·d per rank)."""

    kind: str          # "all-gather" | "reduce-scatter"
    arrays: tuple

    @property
    def label(self) -> str:
        """`all-gather k, v`: its key in what a rank receives."""
        return f"{self.kind} {', '.join(self.arrays)}"


BEFORE = (Collective("all-gather", ("k", "v")),)              # per head group, before its compute
AFTER_BACKWARD = (Collective("reduce-scatter", ("dk", "dv")),)  # per head group, after its backward


def heads(H: int = 1, Hk: int | None = None, s: int | None = None) -> SimpleNamespace:
    """The heads record (H, Hk, s and the derived R = H/Hk, G = Hk/s); BadInput (one line) unless
    Hk | H and s | Hk. Hk defaults to H (no GQA), s to Hk (one head group)."""
    Hk = H if Hk is None else Hk
    s = Hk if s is None else s
    for name, x in (("--heads", H), ("--kv-heads", Hk), ("--heads-k-stride", s)):
        if not isinstance(x, int) or not 1 <= x <= 64:
            raise BadInput(f"{name} must be 1..64, got {x}")
    if H % Hk:
        raise BadInput(f"--kv-heads {Hk} must divide --heads {H} (each KV head serves H/Hk query heads)")
    if Hk % s:
        raise BadInput(f"--heads-k-stride {s} must divide --kv-heads {Hk} (the KV heads gathered at a time)")
    return SimpleNamespace(H=H, Hk=Hk, s=s, R=H // Hk, G=Hk // s)


def group_kv(Hd, g):
    """(first, end) KV head gathered in head group g."""
    return g * Hd.s, (g + 1) * Hd.s


def group_q(Hd, g):
    """(first, end) query head computed in head group g: the library's i·H // Hk, i = gs."""
    return div(g * Hd.s * Hd.H, Hd.Hk), div((g + 1) * Hd.s * Hd.H, Hd.Hk)


def kv_head(Hd, h):
    """The KV head query head h reads (GQA: H/Hk query heads per KV head)."""
    return div(h, Hd.R)


def chunk(S, r):
    """(first, end) token of rank r's chunk in a gathered or reduce-scattered buffer."""
    return r * S, (r + 1) * S


def memory(T, S, d, Hd, backward: bool) -> dict:
    """Elements a rank holds at its peak, by array: its inputs q (S·H·d), k, v (S·Hk·d), the two
    gathered K, V buffers of a head group (2·T·s·d each: this group's and the next one's), out
    (S·H·d) and lse (S·H); the backward also dout, dq, dk, dv and the T-row dK, dV buffer of a
    group before its reduce-scatter (2·T·s·d). The library's transient S-row copies (contiguous
    send slices, `torch.cat` of out, the staging of a strided dK, dV) are not the machine's."""
    H, Hk, s = Hd.H, Hd.Hk, Hd.s
    held = {"q": S * H * d, "k": S * Hk * d, "v": S * Hk * d, "kv buffer": 2 * T * s * d,
            "kv buffer (next group)": 2 * T * s * d, "out": S * H * d, "lse": S * H}
    if backward:
        held.update({"dout": S * H * d, "dkv buffer": 2 * T * s * d, "dq": S * H * d,
                     "dk": S * Hk * d, "dv": S * Hk * d})
    return held


def received(m, S, d, Hd) -> dict:
    """Elements a rank receives per call, by collective: K and V of the other ranks' chunks (all
    groups), and the backward's dK, dV partial sums of its own chunk from the other ranks."""
    return {c.label: len(c.arrays) * (m - 1) * S * Hd.Hk * d for c in (*BEFORE, *AFTER_BACKWARD)}
