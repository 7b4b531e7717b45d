"""algo3-fast: Algorithm 3 with a phase 2 of 2n − 1 cycles at m = n (docs/optimal.md §3).

At m = n, phase 2's step 1 ends every sum of a long row A (2A ≥ n) on PE A − 1 (its home PE, 0 read
as n) at its last step n, and Algorithm 3's step 2 divides w1[A, A − 1] there at its last step n,
when the copy of sum_A has gone round the ring. Here step 1's last step keeps sum_A on its home PE
as it sends it on (a copy), and that PE divides w1[A, A − 1] earlier, in a step where its own entry
is masked: step l on PE l < n (row 1, short for n ≥ 3, has its only entry on PE n), step 2 on PE n
(row n − 1, long, has no entry on PE n). Row 1's sum ends on PE n, which divides w1[1, 1] there.
So step 2 needs n − 1 steps, every DIV on the PE of its EAC (the bridge's rule, docs/optimal.md §6);
phases 1 and 3 are Algorithm 3's, phase 3 taking each w[A, B] where this step 2 makes it.
"""

from __future__ import annotations

from types import SimpleNamespace

from ringproof.schedules import algo3
from ringproof.schedules.algo1 import home, placement, sum_source
from ringproof.schedules.dsl import At, Copy, Either, Schedule, Send
from ringproof.schedules.expr import and_, eq, ge, ite, le, lt, or_, wrap
from ringproof.schedules.problems import MASKED, s, w, w1


def _slot(P, l):
    """The step at which PE l divides its home row's entry (a step where its own entry is masked)."""
    return ite(eq(l, P.n), 2, l)


def _home(P, ix):
    """(A, B, works): the entry of PE l's home row, the row whose sum step 1 ends on PE l."""
    A, B = algo3.phase2_AB(P, SimpleNamespace(i=ix.i, j=P.n, l=ix.l), ())
    return A, B, le(B, A)


def phase2_at(P, A, B):
    """The step-2 iteration dividing w1[A, B], B ≤ A: Algorithm 3's, but for the home entries."""
    at = algo3.phase2_at(P, A, B)
    return dict(at, j=ite(eq(at["j"], P.n), _slot(P, at["l"]), at["j"]))


def _home_div(P, ix):
    return and_(eq(ix.j, _slot(P, ix.l)), _home(P, ix)[2])


def _pick(P, ix, own):
    """`own` (a Ref), or the same array at the home row's entry where this step divides that."""
    A, B, _ = _home(P, ix)
    home_div = _home_div(P, ix)
    return own.array[tuple(ite(home_div, h, o) for h, o in zip((A, B), own.idx))]    # s[A]: A only


def _target(P, ix, st):
    return _pick(P, ix, st.target)


def _operands(P, ix, st):
    return tuple(_pick(P, ix, op) for op in st.operands)


def _sources(P, ix, st):
    """w1 where step 1 read it; sum_A: kept on this PE at step 1's end, else the copy that arrived."""
    home_div = _home_div(P, ix)
    A, B, _ = _home(P, ix)
    kept = At("phase2a", dict(i=ix.i, j=P.n, l=ix.l))
    return (Either(home_div, algo3.w1_final()(P, A, B), st.sources[0]),
            Either(home_div, kept, sum_source(P, ix.i, ix.j, ix.l)))


def _send(P, ix, st):
    """The copy of the row's sum goes on (the step's own row, also where it divides the home row);
    not at the last step: the next PE is that row's home, which kept it."""
    A, _ = algo3.phase2_AB(P, ix, ())
    return Copy(s[A], when=lt(ix.j, P.n - 1), source=sum_source(P, ix.i, ix.j, ix.l))


def _phase2a():
    base = algo3.phase2a(())
    return base.derive(send=lambda P, ix, st: Send(st.send.datum, st.send.when, copy=eq(ix.j, P.n),
                                                    source=st.prev),
                       doc="sum_A += exp(w'_AB) where B ≤ A, else forward sum_A; at the last step the "
                           "sum is copied on and kept")


def _phase2b():
    base = algo3.phase2b(())
    return base.derive(bounds={"j": (1, lambda P, ix: P.n - 1)},
                       guard=lambda P, ix, st: or_(st.guard, _home_div(P, ix)),
                       target=_target, operands=_operands, sources=_sources, send=_send,
                       inverse=lambda P, key: phase2_at(P, *key),
                       relies_on={**base.relies_on,
                                  "phase2a": "step 1's last step keeps sum_A on the PE where it ends "
                                             "(algo3 `phase2_at` at j = n) and copies it on"},
                       doc="w_AB = exp(w'_AB) / sum_A where B ≤ A; PE l divides its home row's entry "
                           "in a masked step (`_slot`)")


def _phase3():
    base = algo3.phase3(())

    def sources(P, ix, st):
        A, B, _ = algo3.group_row(P, ix.h, algo3.chain_column_at(P, ix))
        w_from = Either(eq(ix.j, 1), At("phase2b", phase2_at(P, A, B)),
                        At("phase3", dict(h=ix.h, i=ix.i, j=ix.j - 1, l=wrap(ix.l - 1, P.m))))
        return (w_from,) + tuple(st.sources[1:])

    return base.derive(sources=sources,
                       relies_on={"phase2b": "algo3_fast.phase2_at: where step 2 computes w[A, B]"})


# m = n ≥ 3: Algorithm 3's count less one cycle; its MACs, EACs and DIVs.
CLAIMS = {"cycles": "((2*floor(n/2) + 4)*n - 1)*n/m", "MAC": "n**2*(n + 1)", "EAC": "n*(n + 1)/2",
          "DIV": "n*(n + 1)/2"}

ALGO3_FAST = Schedule("algo3-fast", MASKED, (algo3.phase1(()), _phase2a(), _phase2b(), _phase3()),
                      home=home, doc="masked self-attention, phase 2 in 2n − 1 cycles, n = m ≥ 3 "
                                     "(docs/optimal.md)",
                      notes={"claims": CLAIMS}, placement=placement,
                      requires=lambda P: and_(eq(P.k, 1), ge(P.n, 3)))
