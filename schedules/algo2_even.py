"""algo2-even: symmetric self-attention at the lower bound for even n = m (docs/optimal.md §3).

algo2-fast's phases 2 and 3 with a phase 1 of n(n+1)/2 cycles, every PE busy in every cycle, where
algo2-fast's takes n(n/2 + 1) for even n. Its chains do not move in lock step: a chain
may wait on a PE while others work there, which is what lock-step chains lack (docs/optimal.md §6).

PE C + 1 holds column C (0-based; x[·, C + 1]). Over the cycles u = (n+1)·tau + rho, 0 ≤ tau <
h = n/2, 0 ≤ rho ≤ n (M = h(n+1) of them), with f(C) = ⌈C(n+1)/2⌉ = κ(n+1) + π(h+1) for
C = 2κ + π, PE C + 1 at cycle u works on chain (u − f(C)) mod M, written (n+1)·tau' + rho'. So every chain takes every column once, at increasing
cycles from column e + 1 round to column e (f steps by h or h + 1, and f(n) = M), where
e = 2(h − 1 − tau') + [rho' < h]; the chains ending on column e are algo2-fast's pairs of lane sum
e, block g = rho' − h (even e: h + 1 of them) or rho' (odd e: h), so each pair ends on PE
(A−1)+(B−1) mod n + 1, where algo2-fast's phase 2 reads it. A chain moves on right after its MAC,
so a PE sends one datum per cycle.

The same chains serve every m | n when PE l runs the k = n/m columns l − 1 + i·m one after the
other (cycle k·u + i): `proofs/search/construct.py` builds those runs for the bit-level machine.
The prover's fragment does not normalize that form (carries of h = n/2 in multiples of m), so
this target is m = n (`requires`), where every property is proved.
"""

from __future__ import annotations

from ringproof.schedules.algo1 import home, placement
from ringproof.schedules.algo2_fast import block_of, lane_sum, phase2a, phase2b, phase3
from ringproof.schedules.dsl import HOME, MAC, At, Loop, Move, Phase, Schedule, Step
from ringproof.schedules.expr import and_, div, eq, ge, ite, le, lt, mod, ne, wrap
from ringproof.schedules.problems import SYMMETRIC_ONCE, w1, x


def _chain(P, tau, rho, C):
    """(tau', rho'): the chain (u − f(C)) mod M at virtual cycle u = (n+1)·tau + rho on column C."""
    shift = ite(eq(mod(C, 2), 1), P.h + 1, 0)
    kappa = div(C, 2)
    borrow = lt(rho, shift)
    rho_c = rho - shift + ite(borrow, P.n + 1, 0)
    t = tau - kappa - ite(borrow, 1, 0)
    return ite(lt(t, 0), t + P.h, t), rho_c


def _chain_pair(P, tau_c, rho_c):
    """(A, B, e): the pair of chain (tau', rho') and the column e it ends on, its lane sum. With
    half = e div 2 = h − 1 − tau' and block g: algo2-fast's `_pair`, its div and mod written out."""
    odd = lt(rho_c, P.h)
    half = P.h - 1 - tau_c
    e = 2 * half + ite(odd, 1, 0)
    g = ite(odd, rho_c, rho_c - P.h)
    B0 = ite(le(g, half), g, g + half + ite(odd, 1, 0))
    A0 = ite(ge(e, B0), e - B0, e - B0 + P.n)
    return A0 + 1, B0 + 1, e


def phase1_at(P, A, B, C):
    """The phase-1 iteration doing x[A, C]·x[B, C] for A ≥ B (1-based; m = n)."""
    e = lane_sum(P, A, B)
    g = block_of(P, A, B)
    odd = eq(mod(e, 2), 1)
    tau_c, rho_c = P.h - 1 - div(e, 2), ite(odd, g, g + P.h)
    col = C - 1
    kappa = div(col, 2)
    rho = rho_c + ite(eq(mod(col, 2), 1), P.h + 1, 0)
    carry = ge(rho, P.n + 1)
    t = tau_c + kappa + ite(carry, 1, 0)
    return dict(tau=ite(ge(t, P.h), t - P.h, t), rho=ite(carry, rho - P.n - 1, rho), l=C)


def _inverse1(P, key):
    A, B, C = key
    big = ge(A, B)
    return phase1_at(P, ite(big, A, B), ite(big, B, A), C)


def _phase1():
    def step(P, ix):
        tau, rho, l = ix.tau, ix.rho, ix.l
        C = l - 1
        tau_c, rho_c = _chain(P, tau, rho, C)
        A, B, e = _chain_pair(P, tau_c, rho_c)
        delta = ite(eq(mod(C, 2), 0), P.h, P.h + 1)        # f(C) − f(C − 1), C − 1 taken mod n
        back = lt(rho, delta)
        return Step(
            pe=l, op=MAC, target=w1[A, B], operands=(x[A, C + 1], x[B, C + 1]),
            send=Move(w1[A, B], when=ne(C, e)),                 # the chain ends on column e
            first=eq(C, mod(e + 1, P.n)),
            prev=At("phase1", dict(tau=tau - ite(back, 1, 0), rho=rho - delta + ite(back, P.n + 1, 0),
                                   l=wrap(l - 1, P.m))),
            sources=(HOME, HOME),
        )

    return Phase("phase1", (Loop("tau", 0, lambda P, ix: P.h - 1), Loop("rho", 0, "n")),
                 step, inverse=_inverse1,
                 doc="w'_AB += x_A[C]·x_B[C] once per pair A ≥ B; chain (u − f(C)) mod M on column C, "
                     "ending on PE ((A−1)+(B−1)) mod n + 1")


def _w1_done(P, A, B):
    """Witness: the phase-1 iteration that finishes the pair {A, B}: its MAC on PE (A−1)+(B−1) mod n + 1."""
    big = ge(A, B)
    a, b = ite(big, A, B), ite(big, B, A)
    return At("phase1", phase1_at(P, a, b, lane_sum(P, a, b) + 1))


RELIES = "_w1_done: phase 1 ends pair {A, B} on PE ((A−1)+(B−1)) mod n + 1 (`_chain_pair`, `phase1_at`)"

# m = n: (n/2)(n+1) = n(n+1)/2 cycles of phase 1 with m MACs each (each pair once, d = n MACs), d·n² MACs in
# phase 3; no MOVE cycle anywhere; T = the bound.
CLAIMS = {"cycles": "floor(n/2)*(n + 1) + 2*n**2/m + n**3/m", "MAC": "n**3 + m*floor(n/2)*(n + 1)",
          "EAC": "n**2", "DIV": "n**2"}

ALGO2_EVEN = Schedule("algo2-even", SYMMETRIC_ONCE,
                      (_phase1(), phase2a(_w1_done, RELIES), phase2b(), phase3()), home=home,
                      doc="symmetric self-attention at the lower bound for even n = m (docs/optimal.md)",
                      notes={"claims": CLAIMS}, placement=placement,
                      requires=lambda P: and_(eq(mod(P.n, 2), 0), eq(P.k, 1)), derived={"h": lambda P: div(P.n, 2)})
