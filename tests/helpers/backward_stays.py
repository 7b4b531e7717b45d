"""Stay hints of the non-causal backward ring `ring-attention-bwd` (`Schedule.stays`), kept for the
tests: every one is proved (19 checks) and the occupancy they give is the ring model's at every
cycle, the dk and dv rows the return hop moves home at ring step m kept there to the end ("home").
With its six candidate iterations the peak is derived, for k ≥ 5, m ≥ 3 the Max of three (step 1's
second row, its row k − 1 where d > 2k, step 2's first row where d > 6k − 2), equal to the ring
model's at every n, d ≤ 12 and beyond; but in about 9 s of CPU, so the registered target carries
none (docs/proofs.md, "Balance and memory")."""

from ringproof.schedules.context_parallel import BACKWARD_FORMS
from ringproof.schedules.expr import and_, eq, ge, gt, or_


def _last_row(P, ix):
    """K's last use on a PE: its last query row (for m = 1 also the first, whose copy to itself
    arrives before the next row's use)."""
    return or_(eq(ix.i, P.k), and_(eq(P.m, 1), eq(ix.i, 1)))


def _last_key(P, ix):
    """A row's last use (q, dO) and dq's last term: the last key of the last ring step."""
    return and_(eq(ix.s, P.m), eq(ix.b, P.k))


def _last_column(P, ix):
    return eq(ix.c, P.d)


STAYS = {
    "last": {(BACKWARD_FORMS["dq"], "k"): _last_row, (BACKWARD_FORMS["dq"], "dq"): _last_key,
             (BACKWARD_FORMS["dk"], "ds"): _last_column, (BACKWARD_FORMS["dk"], "q"): _last_key,
             (BACKWARD_FORMS["dv"], "p"): _last_column, (BACKWARD_FORMS["dv"], "g"): _last_key},
    "alone": {(BACKWARD_FORMS["dq"], "k"): lambda P, ix: and_(eq(ix.s, P.m), or_(gt(P.m, 1), eq(P.k, 1)))},
    # the sums the last ring step moves on arrive home
    "home": {(BACKWARD_FORMS["dk"], "dk"): lambda P, ix: eq(ix.s, P.m),
             (BACKWARD_FORMS["dv"], "dv"): lambda P, ix: eq(ix.s, P.m)},
    # where a PE holds the most: the first scores (k = 1, m = 1); step 1's dv sums of the last
    # columns, at the last key block or the one before (m = 1); step 1's second row or the one before
    # the last (which is more as d exceeds 2k); step 2's first row at the last key (d ≥ 6k − 2)
    "peak": [(BACKWARD_FORMS["dk"], lambda P: {"s": 1, "i": 1, "b": 1, "u": 2, "c": 1, "l": 1}),
             (BACKWARD_FORMS["dv"], lambda P: {"s": 1, "i": 1, "b": P.k, "u": 3, "c": P.d, "l": 1}),
             (BACKWARD_FORMS["dv"], lambda P: {"s": 1, "i": 1, "b": P.k - 1, "u": 3, "c": P.d, "l": 1,
                                               "when": ge(P.k, 2)}),
             (BACKWARD_FORMS["dk"], lambda P: {"s": 1, "i": 2, "b": 1, "u": 2, "c": 1, "l": 1, "when": ge(P.k, 2)}),
             (BACKWARD_FORMS["dk"], lambda P: {"s": 1, "i": P.k - 1, "b": 1, "u": 2, "c": 1, "l": 1,
                                               "when": ge(P.k, 2)}),
             (BACKWARD_FORMS["dk"], lambda P: {"s": 2, "i": 1, "b": P.k, "u": 2, "c": 1, "l": 1, "when": ge(P.m, 2)})],
}
