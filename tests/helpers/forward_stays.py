"""Stay hints of the non-causal `ring-attention` forward (`Schedule.stays`), kept for the tests: every
one is proved, the occupancy they give is the ring model's at every cycle, and its largest is
derived for every n, d, m (docs/proofs.md, "Balance and memory"), but in about 7 s of CPU
(`benchmarks/bench_peak.py`), which would triple `prove ring-attention`'s time, so the registered
target carries none and leaves its peak measured."""

from ringproof.schedules.context_parallel import FORMS
from ringproof.schedules.expr import and_, eq, ge, gt, or_


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


# where a PE holds the most: at cycle 0 (k = 1, m = 1: its inputs); in step 1 once the next blocks
# have arrived, before its own K and V blocks are freed (the row before the last, or the first row's
# last scores); in step 2 (m ≥ 2), both blocks held and every row's sums begun (the second row, or
# the first row's last scores)
PEAK = [(FORMS["scores"], lambda P: {"s": 1, "i": 1, "u": 1, "b": 1, "c": 1, "l": 1}),
        (FORMS["l"], lambda P: {"s": 1, "i": P.k - 1, "u": 2, "b": 1, "c": P.d + 1, "l": 1, "when": ge(P.k, 2)}),
        (FORMS["l"], lambda P: {"s": 1, "i": 1, "u": 2, "b": P.k, "c": P.d + 1, "l": 1}),
        (FORMS["o"], lambda P: {"s": 2, "i": 2, "u": 2, "b": 1, "c": 1, "l": 1,
                                "when": and_(ge(P.m, 2), ge(P.k, 2))}),
        (FORMS["l"], lambda P: {"s": 2, "i": 1, "u": 2, "b": P.k, "c": P.d + 1, "l": 1, "when": ge(P.m, 2)})]
