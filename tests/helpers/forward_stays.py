"""Stay hints of the non-causal `ring-attention` forward (`Schedule.stays`), kept for the tests: every
one is proved and the occupancy they give is the ring model's at every cycle, but Z3 does not show
its largest for k, m ≥ 3 (docs/proofs.md, "Balance and memory"), so the registered target has none."""

from ringproof.schedules.context_parallel import FORMS
from ringproof.schedules.expr import and_, eq, gt, or_


def _received(P, ix):
    """The copy a PE passes on is used by the next PE in the next ring step; at the last step it is
    the next PE's own block, home again and unused -- but for m = 1, where the one PE sends its
    block to itself while its other rows still use it."""
    return and_(eq(ix.s, P.m), or_(gt(P.m, 1), eq(P.k, 1)))


def _last_row(P, ix):
    """The last use of a key or value block on a PE: its last query row (for m = 1 also the first,
    whose copy to itself arrives before the next row's use)."""
    return or_(eq(ix.i, P.k), and_(eq(P.m, 1), eq(ix.i, 1)))


STAYS = {
    "last": {(FORMS["scores"], "q"): lambda P, ix: and_(eq(ix.s, P.m), eq(ix.b, P.k)),
             (FORMS["scores"], "k"): _last_row,
             (FORMS["o"], "v"): _last_row,
             (FORMS["l"], "w1"): lambda P, ix: True,
             (FORMS["l"], "mx"): lambda P, ix: and_(eq(ix.s, P.m), eq(ix.b, P.k)),
             ("out", "o"): lambda P, ix: True,
             ("out", "l"): lambda P, ix: eq(ix.c, P.d),
             ("out", "y"): lambda P, ix: True},
    "alone": {(FORMS["scores"], "k"): _received, (FORMS["o"], "v"): _received},
}
