"""Stay hints of Algorithm 3 (`Schedule.stays`), kept for the tests: every hint check is proved by
Z3 for every n, and the marks are the ring model's last uses at every size n ≤ 12, but the peak is
not derived, so the registered target carries none and `prove algo3` leaves its peak measured.

Phases 1 and 3 have their guard read (stays["guard"], checked equal to it at every iteration):
every group h with 2h < n works on all its chains, so only the middle group (h = n div 2, n even)
compares its chain with a threshold, n − n div 2, and no index h stands beside the block. The
moved sums w1 (sent under the guard) are read so too.

Why not derived: with that reading, phase 1's and phase 3's counts stop at the middle group's
threshold, (i − 1)·m + ... ≤ n − ⌊k·m/2⌋ (`i_*m - k*m + floor(k*m/2) ≤ 0 is not affine`): the parity
of k, and inside the block that of m (2·(offset + 1) ≤ m for odd k), which the counter does not
split; phase 2a's at step 1's first node, `first_j`'s short-row threshold 2A < n beside m·i
(`m multiplies an index and the rest is not shown within (−m, m]`). Without the reading phase 1's
stopped first where its guard put the row group h (0 .. n div 2, not a digit of m) against a
block threshold. Past the arrivals (`stays.probe`), the marks of q and y (`row_ends`) and of k
and v (`key_ends`) read h against a block too (div(n − h − 1, m)); their counts are not reached.
The balance counts these phases over their terms (docs/proofs.md, "Balance and memory").

On PE l a run of m steps of block i works on one column C, the chain offsets o = (l − j) mod m
coming in the order l − 1, l − 2, ..., 0, m − 1, ..., l: offset o at the run's step
t(o) = (l − 1 − o) mod m + 1."""

from ringproof.schedules.algo3 import _max, chain_column_at, group_row
from ringproof.schedules.expr import and_, div, eq, ge, gt, ite, le, lt, mod, not_, or_


def guard(P, ix):
    """Phases 1 and 3's guard read: a group with 2h < n works on every chain; the middle group
    (h = n div 2 with 2h = n) on its chains Bo ≤ n − n div 2."""
    return or_(lt(2 * ix.h, P.n), le(chain_column_at(P, ix), P.n - div(P.n, 2)))


def _step_of(P, l, o):
    """t(o): the step of its run (1 .. m) at which PE l works on chain offset o."""
    return mod(l - 1 - o, P.m) + 1


def _last_offset(P, l, lo, hi):
    """The offset of [lo, hi] that PE l's run visits last: the least one ≥ l where there is one,
    else lo."""
    return ite(ge(hi, l), _max(lo, l), lo)


def row_ends(P, ix):
    """The last use on PE l of row A's q[A, C] (phase 1) or y[A, C] (phase 3): the last block
    holding A's chains, at its last offset there (long rows: chains 1 .. n − h; short: n − h + 1 .. n)."""
    m, n, h = P.m, P.n, ix.h
    o = mod(ix.l - ix.j, m)
    long_ = le(chain_column_at(P, ix), n - h)
    at_long = and_(eq(ix.i, div(n - h - 1, m) + 1), eq(o, _last_offset(P, ix.l, 0, mod(n - h - 1, m))))
    a = ite(eq(div(n - h, m), P.k - 1), mod(n - h, m), 0)      # the short row's first offset in block k
    at_short = and_(eq(ix.i, P.k), eq(o, _last_offset(P, ix.l, a, m - 1)))
    return or_(and_(long_, at_long), and_(not_(long_), at_short))


def key_ends(P, ix):
    """The last use on PE l of k[B, C] (phase 1) or v[B, C] (phase 3): in the last group with a row
    A ≥ B (n div 2 for B ≤ n − n div 2, else the group of row B), at the later of its one or two
    chains there (B on the long row, B + n − h on the short row where B ≤ h < n/2)."""
    m, n, h = P.m, P.n, ix.h
    Bo = chain_column_at(P, ix)
    _, B, _ = group_row(P, h, Bo)
    half = div(n, 2)
    two = and_(lt(2 * h, n), le(B, h))
    other = ite(le(Bo, n - h), B + n - h, B)

    def key(c):                        # (block, step in its run) of chain c: the time order on PE l
        return div(c - 1, m), _step_of(P, ix.l, mod(c - 1, m))
    (b, t), (b2, t2) = key(Bo), key(other)
    later = or_(gt(b, b2), and_(eq(b, b2), gt(t, t2)))
    return and_(eq(h, ite(le(B, n - half), half, n - B)), or_(not_(two), later))


STAYS = {
    "last": {("phase1", "q"): row_ends,
             ("phase1", "k"): key_ends,
             ("phase2b", "w1"): lambda P, ix: True,
             ("phase2b", "s"): lambda P, ix: True,         # each copy used once, then passed on
             ("phase3", "w"): lambda P, ix: True,
             ("phase3", "v"): key_ends,
             ("phase3", "y"): row_ends},
    "guard": {"phase1": guard, "phase3": guard},
    "alone": {("phase2b", "s"): lambda P, ix: eq(ix.j, P.n),     # the next block's sum is used there
              ("phase3", "w"): lambda P, ix: eq(ix.j, P.n)},
    # group 0 (row n), block k: the inputs, k − 1 finished scores and one running (n(3n + 1)/m)
    "peak": [("phase1", lambda P: {"h": 0, "i": P.k, "j": 1, "l": 1})],
}
