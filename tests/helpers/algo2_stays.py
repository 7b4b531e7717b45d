"""Stay hints of Algorithm 2 (`Schedule.stays`), kept for the tests: every hint check is proved by
Z3 for every n, and the marks are the ring model's last uses and unused copies at every size
n ≤ 12, but the peak is not derived, so the registered target carries none and `prove algo2` leaves
its peak measured.

Why not derived: phase 1's loop j runs to n + extra(h), and its sends arrive (a moved sum, the copy
of a finished w1 and its forwarded hops, the mirror stored by the last hop) at iterations whose
conditions read h mod m, over h ∈ [0, n div 2], a range that is not a whole number of periods of m:
the counter's radix split does not apply, and its first count (`stays.probe`) fails with "cannot
bound h_ within −2m .. 3m − 1 (Mod(h_, m))".

Phases 2 and 3 are Algorithm 1's and carry its marks (x in the place of v). In phase 1 a running
sum moved on (j < n) and a copy that a MOVE cycle (j > n) forwards end there: their use is the
last; the finished w1 (j = n) and the mirror stored by the last hop stay until phase 2b reads them.
The peak candidate is the first cycle of phase 2b on PE 1 (the ring model's at n = 16, m = 4:
64 x, 64 w1, 4 s, 1 w), where (2n² + n)/m + 1 is measured at every n ≤ 16, m ≤ 8.

What the count still needs (each a checked hint to write): phase 1's loop j read padded to an
affine bound (n + m − 1), no event counted at a padded point; the forwarded copies, each held for
the one cycle of the MOVE step that passes it on, kept out of the counts (a local [j > n]); the
mirror's arrival counted at its block's padded end, which no iteration of the nest separates from
its last hop. Patched into the counter by hand, unchecked (an experiment kept off the branch),
they give (2n² + n)/m + 1 at that candidate, the ring model's."""

from ringproof.schedules.expr import and_, eq, mod, ne

STAYS = {
    "last": {("phase1", "w1"): lambda P, ix: ne(ix.j, P.n),          # a moved sum, a forwarded copy
             ("phase2b", "w1"): lambda P, ix: True,
             ("phase2b", "s"): lambda P, ix: True,
             ("phase3", "w"): lambda P, ix: True,
             ("phase3", "x"): lambda P, ix: eq(ix.h, P.n),
             ("phase3", "y"): lambda P, ix: and_(eq(ix.i, P.k), eq(mod(ix.j, P.m), 0))},
    "alone": {("phase2b", "s"): lambda P, ix: eq(ix.j, P.n),
              ("phase3", "w"): lambda P, ix: eq(ix.j, P.n)},
    "peak": [("phase2b", lambda P: {"i": 1, "j": 1, "l": 1})],
}
