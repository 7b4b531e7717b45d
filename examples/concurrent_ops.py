"""Concurrent ops: one phase whose op kind is chosen per iteration (`ite` of two steps).

Algorithm 1 with its phases 2a (sum_A += exp(w1[A, B]), EAC) and 2b (w[A, B] = exp(w1[A, B]) /
sum_A, DIV) written as one phase `softmax`: in ring step j ≤ n a PE does 2a's EAC of step j, after
it 2b's DIV of step j − n. The prover and the ring model run the phase as two forms, `softmax.EAC`
and `softmax.DIV`, which share the phase's cycles; witnesses name the phase (`At("softmax", ...)`)
and resolve to the form chosen there. Every property and count proves for all n, m as Algorithm 1's.
"""

from types import SimpleNamespace

from ringproof import ALGO1, DIV, EAC, At, Copy, Either, Loop, Move, Phase, Schedule, Step, eq, ite, le, wrap
from ringproof.schedules.algo1 import phase2_AB, phase2_at, w1_last
from ringproof.schedules.problems import s, w, w1

W1_LAST = w1_last()        # where phase 1 finishes w1[A, B]


def softmax(P, ix, last_exp=lambda P: P.n):
    i, l, n = ix.i, ix.l, P.n
    exp_step = le(ix.j, last_exp(P))         # the op condition: EAC in steps 1..n, DIV after
    j = ite(exp_step, ix.j, ix.j - n)        # the step of phase 2a / 2b this iteration does
    A, B = phase2_AB(P, SimpleNamespace(i=i, j=j, l=l), ())
    eac = Step(pe=l, op=EAC, target=s[A], operands=(w1[A, B],), send=Move(s[A]),
               first=eq(j, 1), prev=At("softmax", dict(i=i, j=ix.j - 1, l=wrap(l - 1, P.m))),
               sources=(W1_LAST(P, A, B),))
    div_ = Step(pe=l, op=DIV, target=w[A, B], operands=(w1[A, B], s[A]), send=Copy(s[A]),
                sources=(At("softmax", dict(i=i, j=j, l=l)),       # w1[A, B] where the EAC read it
                         Either(eq(j, 1), At("softmax", dict(i=i, j=n, l=wrap(l - 1, P.m))),
                                At("softmax", dict(i=i, j=ix.j - 1, l=wrap(l - 1, P.m))))))
    return ite(exp_step, eac, div_)


def _div_at(P, key):
    at = phase2_at(P, *key)
    return dict(at, j=at["j"] + P.n)


SOFTMAX = Phase("softmax", (Loop("i", 1, "k"), Loop("j", lambda P, ix: 1, lambda P, ix: 2 * P.n)), softmax,
                inverse={"s": lambda P, key: phase2_at(P, *key), "w": _div_at},
                doc="EAC in steps 1..n, DIV in steps n+1..2n, one phase")


def _w_from_softmax(P, ix, st):
    """Phase 3 reads w where the softmax phase's DIV made it (algo1 names phase 2b)."""
    first = st.sources[0]
    made = first.then
    return (Either(first.cond, At("softmax", dict(made.idx, j=made.idx["j"] + P.n)), first.other),
            st.sources[1])


PHASE1, _, _, PHASE3 = ALGO1.phases
SCHEDULE = Schedule("concurrent-ops", ALGO1.problem,
                    (PHASE1, SOFTMAX, PHASE3.derive(sources=_w_from_softmax, relies_on={})),
                    home=ALGO1.home, placement=ALGO1.placement,
                    notes={"claims": {"cycles": "(2*n**3 + 2*n**2)/m", "MAC": "2*n**3", "EAC": "n**2",
                                      "DIV": "n**2"}})
