"""Stay hints of the non-causal backward ring `ring-attention-bwd` (`Schedule.stays`), kept for the
tests: every one is proved (19 checks) and the occupancy they give is the ring model's at every
cycle, the dk and dv rows the return hop moves home at ring step m kept there to the end ("home").
No peak is derived: the iteration where a PE holds the most moves with d against k (the value at
row 2 of ring step 1, the ring model's peak at every n, d ≤ 12, is exceeded at n = 20, m = 4,
d = 16), so the registered target carries none (docs/proofs.md, "Balance and memory")."""

from ringproof.schedules.context_parallel import BACKWARD_FORMS
from ringproof.schedules.expr import and_, eq, gt, or_


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
}
