"""EAC and DIV in the same cycle on different PEs: the op kind chosen by a formula of the PE.

s[A] = Σ_B exp(a[A, B]) and w[A, B] = exp(a[A, B]) / c[A]. PE l holds the rows A ≡ l (mod m) of a
and c, so each row's work is local; in block i it does row (i − 1)·m + l: n EACs and n DIVs, in
steps j = 1..2n. Odd PEs do the EACs first, even PEs the DIVs first, so in every step with m ≥ 2
some PEs do EAC while others do DIV: `ite(eac, Step(op=EAC, ...), Step(op=DIV, ...))` with the
condition a formula of l and j. Every property proves for all n, m.
"""

from ringproof import (DIV, EAC, HOME, At, Loop, Phase, Schedule, Step, and_, computation, div, eq, gt, ite,
                       le, mod, not_, or_, wrap)

MIX = computation("mix", {"a": "n n", "c": "n", "s": "n", "w": "n n"},
                  ["s[A] += exp(a[A, B])", "w[A, B] = exp(a[A, B]) / c[A]"], output=("s", "w"))
a, c = MIX.inputs
s, w = MIX.outputs


def odd(P, l):
    return eq(mod(l, 2), 1)


def step(P, ix):
    i, j, l, n = ix.i, ix.j, ix.l, P.n
    A = (i - 1) * P.m + l
    eac = or_(and_(odd(P, l), le(j, n)), and_(not_(odd(P, l)), gt(j, n)))   # the op condition
    B = ite(le(j, n), j, j - n)
    return ite(eac,
               Step(pe=l, op=EAC, target=s[A], operands=(a[A, B],), first=eq(B, 1),
                    prev=At("mix", dict(i=i, j=j - 1, l=l)), sources=(HOME,)),
               Step(pe=l, op=DIV, target=w[A, B], operands=(a[A, B], c[A]), sources=(HOME, HOME)))


def at(P, key, first):
    """The iteration doing term key: in the first half of the steps on PEs where `first`."""
    A, B = key[0], key[1]
    l = wrap(A, P.m)
    return dict(i=div(A - 1, P.m) + 1, j=ite(first(l), B, B + P.n), l=l)


PHASE = Phase("mix", (Loop("i", 1, "k"), Loop("j", lambda P, ix: 1, lambda P, ix: 2 * P.n)), step,
              inverse={"s": lambda P, key: at(P, key, lambda l: odd(P, l)),
                       "w": lambda P, key: at(P, key, lambda l: not_(odd(P, l)))})
SCHEDULE = Schedule("mixed-ops", MIX, (PHASE,), home=lambda P, ref: wrap(ref.idx[0], P.m),
                    notes={"claims": {"cycles": "2*n**2/m", "EAC": "n**2", "DIV": "n**2"}})
