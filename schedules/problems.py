"""The three variants of self-attention of the paper (eqs. 1-3), declared with `computation`.

    w1[A, B] = Σ_C q[A, C] · k[B, C]        (phase 1, w'_AB)
    s[A]     = Σ_B exp(w1[A, B])             (phase 2 step 1)
    w[A, B]  = exp(w1[A, B]) / s[A]          (phase 2 step 2)
    y[A, C]  = Σ_B w[A, B] · v[B, C]         (phase 3)

Symmetric: x serves as q, k and v, so w1[A, B] = w1[B, A]. Masked: only terms with B ≤ A.
Extents: A, B ∈ [1, n]; C ∈ [1, d] (d = n in the paper's schedules).
"""

from __future__ import annotations

from ringproof.schedules.computation import computation

_SHAPES = {"w1": "n n", "s": "n", "w": "n n", "y": "n d"}


def _attention(name, qq, kk, vv, mask="", symmetric=()):
    inputs = {a: "n d" for a in dict.fromkeys((qq, kk, vv))}
    return computation(name, {**inputs, **_SHAPES}, [
        f"w1[A, B] += {qq}[A, C] * {kk}[B, C]{mask}",
        f"s[A] += exp(w1[A, B]){mask}",
        f"w[A, B] = exp(w1[A, B]) / s[A]{mask}",
        f"y[A, C] += w[A, B] * {vv}[B, C]{mask}",
    ], symmetric=symmetric)


PLAIN = _attention("plain", "q", "k", "v")
# The symmetric problem with each w1 pair computed once (B ≤ A) and read in either orientation:
# the bit-level machine's symmetric problem, where w'_AB and w'_BA are one datum (algo2-fast).
SYMMETRIC_ONCE = computation("symmetric", {"x": "n d", **_SHAPES}, [
    "w1[A, B] += x[A, C] * x[B, C] if B <= A",
    "s[A] += exp(w1[A, B])",
    "w[A, B] = exp(w1[A, B]) / s[A]",
    "y[A, C] += w[A, B] * x[B, C]",
], transposable=("w1",))
SYMMETRIC = _attention("symmetric", "x", "x", "x", symmetric=("w1",))
MASKED = _attention("masked", "q", "k", "v", mask=" if B <= A")

q, k, v = PLAIN.inputs
x, = SYMMETRIC.inputs
w1, s, w, y = (e.target for e in PLAIN.equations)

PROBLEMS = {p.name: p for p in (PLAIN, SYMMETRIC, MASKED)}
