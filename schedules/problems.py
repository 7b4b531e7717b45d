"""The three variants of self-attention of the paper (eqs. 1-3), as arrays and defining equations.

    w1[A, B] = Σ_C q[A, C] · k[B, C]        (phase 1, w'_AB)
    s[A]     = Σ_B exp(w1[A, B])             (phase 2 step 1)
    w[A, B]  = exp(w1[A, B]) / s[A]          (phase 2 step 2)
    y[A, C]  = Σ_B w[A, B] · v[B, C]         (phase 3)

Symmetric: x serves as q, k and v, so w1[A, B] = w1[B, A]. Masked: only terms with B ≤ A.
Extents: A, B ∈ [1, n]; C ∈ [1, d] with d = n as in the paper.
"""

from __future__ import annotations

from ringproof.schedules.dsl import DIV, EAC, MAC, Array, Equation, Problem
from ringproof.schedules.expr import le

q = Array("q", ("n", "d"), is_input=True)
k = Array("k", ("n", "d"), is_input=True)
v = Array("v", ("n", "d"), is_input=True)
x = Array("x", ("n", "d"), is_input=True)
w1 = Array("w1", ("n", "n"))
s = Array("s", ("n",))
w = Array("w", ("n", "n"))
y = Array("y", ("n", "d"))


def _equations(qq, kk, vv, mask):
    where2 = (lambda P, a, b: le(b, a)) if mask else None
    where3 = (lambda P, a, c, b: le(b, a)) if mask else None
    return (
        Equation(w1, MAC, lambda P, a, b, c: (qq[a, c], kk[b, c]), reduce="d", reduce_at=(0, 1),
                 where=(lambda P, a, b, c: le(b, a)) if mask else None),
        Equation(s, EAC, lambda P, a, b: (w1[a, b],), reduce="n", reduce_at=(0, 1), where=where2),
        Equation(w, DIV, lambda P, a, b: (w1[a, b], s[a]), where=where2),
        Equation(y, MAC, lambda P, a, c, b: (w[a, b], vv[b, c]), reduce="n", reduce_at=(0, 1),
                 where=where3),
    )


PLAIN = Problem("plain", (q, k, v), _equations(q, k, v, mask=False), y)
SYMMETRIC = Problem("symmetric", (x,), _equations(x, x, x, mask=False), y, symmetric_pairs=(w1,))
MASKED = Problem("masked", (q, k, v), _equations(q, k, v, mask=True), y)

PROBLEMS = {p.name: p for p in (PLAIN, SYMMETRIC, MASKED)}
