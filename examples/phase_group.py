"""Phases that share cycles: a lock-step group (`Phase(..., group="softmax")`).

Algorithm 1's softmax written as two phases that run in lock step, `exps` (sum_A += exp(w1[A, B]),
EAC) and `divs` (w[A, B] = exp(w1[A, B]) / sum_A, DIV). Both walk the same loops i ∈ 1..k,
j ∈ 1..2n and start in the same cycle; exps works in ring steps j ≤ n, divs after, reading the
sum exps finished and sent on (an operand made in the same cycle would not be there yet). No two
ops of the group share a PE in a cycle (no-conflict across the group), and the group's cycles are
counted once. Every property proves for all n, m.
"""

from types import SimpleNamespace

from ringproof import ALGO1, DIV, EAC, At, Copy, Either, Loop, Move, Phase, Schedule, Step, eq, le, wrap
from ringproof.schedules.algo1 import phase2_AB, phase2_at, w1_last
from ringproof.schedules.problems import s, w, w1

W1_LAST = w1_last()        # where phase 1 finishes w1[A, B]

LOOPS = (Loop("i", 1, "k"), Loop("j", 1, lambda P, ix: 2 * P.n))


def _AB(P, i, j, l):
    return phase2_AB(P, SimpleNamespace(i=i, j=j, l=l), ())


def exps(P, ix):
    i, j, l = ix.i, ix.j, ix.l
    A, B = _AB(P, i, j, l)
    return Step(pe=l, op=EAC, target=s[A], operands=(w1[A, B],), guard=le(j, P.n),
                send=Move(s[A], when=le(j, P.n)),
                first=eq(j, 1), prev=At("exps", dict(i=i, j=j - 1, l=wrap(l - 1, P.m))),
                sources=(W1_LAST(P, A, B),))


def divs(P, ix, first_div=lambda P: P.n + 1):
    i, l, n = ix.i, ix.l, P.n
    j = ix.j - n                                   # the step of phase 2b this iteration does
    A, B = _AB(P, i, j, l)
    return Step(pe=l, op=DIV, target=w[A, B], operands=(w1[A, B], s[A]), guard=le(first_div(P), ix.j),
                send=Copy(s[A], when=le(first_div(P), ix.j)),
                sources=(At("exps", dict(i=i, j=j, l=l)),          # w1[A, B] where exps read it
                         Either(eq(j, 1), At("exps", dict(i=i, j=n, l=wrap(l - 1, P.m))),
                                At("divs", dict(i=i, j=ix.j - 1, l=wrap(l - 1, P.m))))))


def _div_at(P, key):
    at = phase2_at(P, *key)
    return dict(at, j=at["j"] + P.n)


EXPS = Phase("exps", LOOPS, exps, inverse=lambda P, key: phase2_at(P, *key), group="softmax")
DIVS = Phase("divs", LOOPS, divs, inverse=_div_at, group="softmax")


def _w_from_divs(P, ix, st):
    """Phase 3 reads w where divs made it (algo1 names phase 2b)."""
    first = st.sources[0]
    made = first.then
    return (Either(first.cond, At("divs", dict(made.idx, j=made.idx["j"] + P.n)), first.other), st.sources[1])


PHASE1, _, _, PHASE3 = ALGO1.phases
SCHEDULE = Schedule("phase-group", ALGO1.problem,
                    (PHASE1, EXPS, DIVS, PHASE3.derive(sources=_w_from_divs, relies_on={})),
                    home=ALGO1.home, placement=ALGO1.placement,
                    notes={"claims": {"cycles": "(2*n**3 + 2*n**2)/m", "EAC": "n**2", "DIV": "n**2"}})
