"""Zigzag (head-tail) layout for causal scores: w1[A, B] = Σ_C q[A, C]·k[B, C] for B ≤ A.

The n tokens form 2m chunks of h = n/(2m); PE l holds chunks l − 1 and 2m − l (counted from 0), a
head and a tail, so every PE has as many unmasked terms as any other. Its rows of q stay; the key
chunks travel the ring as in examples/ring_contiguous.py: in ring step s PE l works on the keys of
PE ((l − s) mod m) + 1. Needs 2m | n (`requires`); h is declared once (`derived`).
"""

from ringproof import (HOME, MAC, At, Copy, Either, Loop, Phase, Schedule, Step, computation, div, eq, ite,
                       le, lt, mod, wrap)

CAUSAL = computation("causal-scores", {"q": "n d", "k": "n d", "w1": "n n"},
                     ["w1[A, B] += q[A, C] * k[B, C] if B <= A"])
q, kk = CAUSAL.inputs
w1 = CAUSAL.output


def token(P, pe, i):
    """Local token i ∈ [1, k] of PE pe: its head chunk pe − 1, then its tail chunk 2m − pe."""
    return ite(le(i, P.h), (pe - 1) * P.h + i, (2 * P.m - pe) * P.h + i - P.h)


def owner(P, A):
    """The PE holding token A: chunk g = (A − 1) div h is PE g + 1's head or PE 2m − g's tail."""
    g = div(A - 1, P.h)
    return ite(lt(g, P.m), g + 1, 2 * P.m - g)


def local(P, A):
    """A's position among its PE's k tokens."""
    return ite(lt(div(A - 1, P.h), P.m), 0, P.h) + mod(A - 1, P.h) + 1


def step(P, ix):
    A, B = token(P, ix.l, ix.i), token(P, mod(ix.l - ix.s, P.m) + 1, ix.b)
    key = Either(eq(ix.s, 1), HOME, At("scores", dict(s=ix.s - 1, i=1, b=ix.b, c=ix.c, l=wrap(ix.l - 1, P.m))))
    return Step(pe=ix.l, op=MAC, target=w1[A, B], operands=(q[A, ix.c], kk[B, ix.c]),
                guard=le(B, A),                                   # causal mask
                send=Copy(kk[B, ix.c], when=eq(ix.i, 1), source=key),
                first=eq(ix.c, 1),
                prev=At("scores", dict(s=ix.s, i=ix.i, b=ix.b, c=ix.c - 1, l=ix.l)),
                sources=(HOME, Either(eq(ix.i, 1), key, At("scores", dict(s=ix.s, i=1, b=ix.b, c=ix.c, l=ix.l)))))


def inverse(P, key):
    """The iteration that adds q[A, C]·k[B, C]."""
    A, B, C = key
    l = owner(P, A)
    return dict(s=mod(l - owner(P, B), P.m) + 1, i=local(P, A), b=local(P, B), c=C, l=l)


def home(P, ref):
    return owner(P, ref.idx[0])


PHASE = Phase("scores", (Loop("s", 1, "m"), Loop("i", 1, "k"), Loop("b", 1, "k"), Loop("c", 1, "d")),
              step, inverse=inverse)

SCHEDULE = Schedule("ring-zigzag", CAUSAL, (PHASE,), home=home,
                    requires=lambda P: eq(mod(P.n, 2 * P.m), 0),
                    derived={"h": lambda P: div(P.n, 2 * P.m)},
                    notes={"claims": {"cycles": "n**3/m", "MAC": "m*h*n*(2*m*h + 1)"}})
