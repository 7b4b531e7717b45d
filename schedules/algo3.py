"""Algorithm 3 of Yu & Fujita (masked self-attention), phase by phase, with the prover's witnesses.

Only the n(n+1)/2 entries with B ≤ A are computed. Phases 1 and 3 pack rows into groups of n entries:
group h (0 ≤ h < n/2) is row n−h (B = 1..n−h) followed by row h (B = 1..h); group 0 is row n alone;
for even n the group h = n/2 is the middle row alone (only its chains with B ≤ n/2 work). Phase 2
walks the rows as Algorithm 1 does, with short rows (2A < n) shifted to where phase 1 left them;
its PEs idle (step 1: forward the running sum) on masked entries.

Each formula stands beside the printed line it repairs (paper, Algorithm 3); `docs/algo3.md`
records the verifier's verdict on each printed defect (see `variant`). Inputs are distributed by
column as in Algorithm 1: q[A, C], k[B, C], v[B, C] on PE ((C - 1) mod m) + 1. Phases 1 and 3 walk
the columns as Algorithm 1's (`cols`: `PAPER` for d = n, `GENERAL` for d of its own, m | d).
"""

from __future__ import annotations

from ringproof.schedules.dsl import (DIV, EAC, HOME, MAC, At, Copy, Either, Loop, Move, Phase, Recount,
                           Schedule, Step, variant_name)
from ringproof.schedules.expr import and_, div, eq, ge, gt, ite, le, lt, mod, not_, or_, wrap
from ringproof.schedules.algo1 import GENERAL, PAPER, home, placement, sum_source
from ringproof.schedules.shape import ANY_D
from ringproof.schedules.problems import MASKED, k, q, s, v, w, w1, y

PRINTED_DEFECTS = ("C-bracket", "phase2-B-bracket", "phase2-A-offset", "sum-before-first")


def _max(a, b):
    return ite(ge(a, b), a, b)


def short(P, A):
    """Row A is the short member of its group (packed behind row n − A): 2A < n."""
    return lt(2 * A, P.n)


def group(P, A):
    """The group of row A: A for short rows, n − A otherwise (row n → 0, middle row → n/2)."""
    return ite(short(P, A), A, P.n - A)


def chain_column(P, A, B):
    """Bo: the column of the phase-1/3 chain that carries (A, B) inside its group."""
    return ite(short(P, A), B + P.n - A, B)


def _column(P, l, j, i, printed=False):
    """C (line 8) and Bb (line 19): the column PE l works on at step j of block i; ≡ l (mod m)."""
    m, n = P.m, P.n
    if printed:    # as printed: (l + (j−1)\m)·m + (i−1)·m − 1 % n + 1, ≡ 0 (mod m) for n > 1
        return (l + div(j - 1, m)) * m + (i - 1) * m - mod(1, n) + 1
    return mod(l - 1 + div(j - 1, m) * m + (i - 1) * m, n) + 1


def group_row(P, h, Bo):
    """Lines 7, 9-10, 12-13: (A, B) of chain column Bo in group h, and whether the chain works.
    algo3-fast's phase 3 reads its w sources through it."""
    long_ = le(Bo, P.n - h)
    A = ite(long_, P.n - h, h)                          # line 7 A = n−h; line 10 A = h
    B = ite(long_, Bo, Bo - (P.n - h))                  # line 10 B %= (n−h): the same values here
    return A, B, or_(lt(2 * h, P.n), long_)             # middle group: only row n/2, B ≤ n/2


def _groups(P, ix):
    """h ∈ [0, n div 2] (lines 2-3 plus the even-n middle group of lines 12-13)."""
    return div(P.n, 2)


def phase1_at(P, A, B, C, cols=PAPER):
    """The phase-1 (and phase-3) iteration working on (A, B, C), B ≤ A: the coverage inverse."""
    m = P.m
    Bo = chain_column(P, A, B)
    i = div(Bo - 1, m) + 1
    l = mod(C - 1, m) + 1
    jq = cols.run(P, C, i)
    return dict(h=group(P, A), i=i, j=jq * m + mod(l - Bo, m) + 1, l=l)


def phase2_at(P, A, B):
    """The phase-2 iteration (either step) working on w1[A, B], B ≤ A."""
    m = P.m
    i = div(A - 1, m) + 1
    Bb = ite(short(P, A), mod(B - A - 1, P.n) + 1, B)
    l = mod(Bb - 1, m) + 1
    jq = mod(div(Bb - 1, m) - (i - 1), P.k)
    return dict(i=i, j=jq * m + mod(l - A, m) + 1, l=l)


def _reflected(P, key):
    """A term (A, B) of phase 2 as the point (a, b) of `PHASE2_RECOUNT`: a long row as it is, a
    short row A as a = n − A with its shifted column b = B + n − A (its Bb, on the same PE)."""
    A, B = key
    return ite(short(P, A), P.n - A, A), ite(short(P, A), B + P.n - A, B)


def _unreflected(P, u):
    """The term of the point (a, b): row a, column b where b ≤ a; else the short row n − a, b − a."""
    a, b = u
    return ite(le(b, a), a, P.n - a), ite(le(b, a), b, b - a)


# Phase 2's terms on PE l, counted (balance) as the points (a, b) ∈ [1, n]² with 2a ≥ n, and 2a > n
# or 2b ≤ n, whose column b is on PE l: the long row a (its columns b ≤ a) and the short row n − a
# (shifted, b > a) together hold every column once; the middle row n/2 (n even) keeps b ≤ n/2.
# (Written so, not as 2a > n or 2a = n and 2b ≤ n, the same points, it counts in a quarter of the time.)
PHASE2_RECOUNT = Recount(loops=(Loop("a", 1, "n"), Loop("b", 1, "n")),
                         guard=lambda P, u: and_(ge(2 * u[0], P.n), or_(gt(2 * u[0], P.n), le(2 * u[1], P.n))),
                         pe=lambda P, u: mod(u[1] - 1, P.m) + 1, to=_reflected, back=_unreflected)


W1_FINAL_RELIES = ("w1_final: phase 1 ends w1[A, B] at the last step of its loop j and moves it to "
                   "PE ≡ Bo (`chain_column_at`, `chain_column`, `group`)")


def w1_final(cols=PAPER):
    """Witness: the phase-1 iteration that finishes w1[A, B] (the last column step of phase 1's
    loop j, a multiple of m) and moves it to PE ≡ Bo (`chain_column_at`'s diagonal)."""
    def at(P, A, B):
        Bo = chain_column(P, A, B)
        return At("phase1", dict(h=group(P, A), i=div(Bo - 1, P.m) + 1, j=cols.size(P),
                                 l=mod(Bo - 2, P.m) + 1))
    return at


def first_j(P, A):
    """The first j of the s[A] chain of phase 2 with an unmasked entry (B ≤ A).

    1 for rows with 2A ≥ n; for short rows, with i − 1 = (A−1) div m and a0 = (A−1) mod m, the
    unmasked entries sit in block k − i, reached at block step k − 2i + 1, from offset
    max(0, m − 1 − 2·a0) on.
    """
    m = P.m
    i = div(A - 1, m) + 1
    lead = m - 1 - 2 * mod(A - 1, m)
    return ite(short(P, A), 1 + (P.k - 2 * i + 1) * m + _max(lead, 0), 1)


def y_prev(P, A, B, C):
    """(first, B') of y[A, C] += w[A, B]·v[B, C]: y stays on PE l ≡ C, so the previous term is the
    one on the same PE just before, w[A, B']. The terms of row A reach PE l in the order of
    ρ(Bo) = (Bo div m)·m + (l − Bo) mod m over its chain columns Bo: the prefix [1, A] (2A ≥ n) or
    the suffix [n − A + 1, n] (2A < n). W1: the previous term is in the same block one offset
    earlier; W2: it is the first allowed offset of the block; else the last one of the block before."""
    m, n = P.m, P.n
    l = mod(C - 1, m) + 1
    l0, lm = l - 1, mod(l, m)
    Bo = chain_column(P, A, B)
    beta, o = div(Bo - 1, m), mod(Bo - 1, m)
    r = mod(l0 - o, m)                       # position inside the block
    o1 = mod(o + 1, m)                       # offset one position earlier
    # prefix [1, A]: offsets [0, c] allowed in block beta
    c = ite(eq(beta, div(A - 1, m)), mod(A - 1, m), m - 1)
    pW1 = and_(ge(r, 1), le(o1, c))
    pW2 = and_(ge(r, 1), gt(o1, c), lt(l0, o))
    p_first = and_(not_(pW1), not_(pW2), eq(beta, 0))
    p_bo = ite(pW1, beta * m + o1 + 1, ite(pW2, beta * m + 1, (beta - 1) * m + lm + 1))
    # suffix [n−A+1, n]: offsets [a, m−1] allowed in block beta
    beta_s, a0 = div(n - A, m), mod(n - A, m)
    a = ite(eq(beta, beta_s), a0, 0)
    a_before = ite(eq(beta - 1, beta_s), a0, 0)
    sW1 = and_(ge(r, 1), ge(o1, a))
    sW2 = and_(ge(r, 1), lt(o1, a), le(a, l0))
    s_first = and_(not_(sW1), not_(sW2), eq(beta, beta_s))
    s_bo = ite(sW1, beta * m + o1 + 1,
               ite(sW2, beta * m + a + 1, (beta - 1) * m + _max(a_before, lm) + 1))
    sh = short(P, A)
    return ite(sh, s_first, p_first), ite(sh, s_bo - (n - A), p_bo)


def chain_column_at(P, ix):
    """Bo (line 7) at iteration ix: constant along the diagonal l − j of block i; Bo ∈ [1, n].
    Shared with algo3-fast, whose phases 1 and 3 are these."""
    return mod(ix.l - ix.j, P.m) + (ix.i - 1) * P.m + 1


def _group_loops(cols):
    return (Loop("h", 0, _groups), Loop("i", 1, "k"), Loop("j", 1, cols.extent))


def _col(P, ix, defects, cols):
    """C of phases 1 and 3 (line 8): this file's `_column` (with its printed bracket) for the paper's
    walk, else `cols`'s."""
    if cols is PAPER:
        return _column(P, ix.l, ix.j, ix.i, "C-bracket" in defects)
    return cols.column(P, ix.l, ix.j, ix.i)


def phase1(defects, cols=PAPER):
    """Phase 1, w1 += q·k for B ≤ A; algo3-fast runs it unchanged."""
    def step(P, ix):
        h, i, j, l = ix.h, ix.i, ix.j, ix.l
        A, B, guard = group_row(P, h, chain_column_at(P, ix))          # lines 7, 9-10, 12-13
        C = _col(P, ix, defects, cols)                                 # line 8
        return Step(
            pe=l, op=MAC, target=w1[A, B], operands=(q[A, C], k[B, C]), guard=guard,   # line 11
            send=Move(w1[A, B], when=guard),      # line 11, also at j = n: w1 ends on PE ≡ Bo
            first=eq(j, 1),
            prev=At("phase1", dict(h=h, i=i, j=j - 1, l=wrap(l - 1, P.m))),
            sources=(HOME, HOME),
        )

    return Phase("phase1", _group_loops(cols), step, inverse=lambda P, key: phase1_at(P, *key, cols=cols),
                 doc="w'_AB += q_A[C]·k_B[C] for B ≤ A, rows packed in groups of n entries")


def phase2_AB(P, ix, defects):
    """(A, B) of phase 2's iteration ix (lines 18-21); algo3-fast finds its home entries with it."""
    i, j, l = ix.i, ix.j, ix.l
    A = mod(l - j, P.m) + (i - 1) * P.m + (0 if "phase2-A-offset" in defects else 1)   # line 18
    Bb = _column(P, l, j, i, "phase2-B-bracket" in defects)                            # line 19
    B = ite(short(P, A), mod(Bb - (P.n - A) - 1, P.n) + 1, Bb)                         # lines 20-21
    return A, B


def phase2a(defects, w1_source=w1_final()):
    """Phase 2 step 1, the row sums where B ≤ A; algo3-fast derives its own from it.
    `w1_source(P, A, B)`: where phase 1 left w1[A, B] (`w1_final` of its columns)."""
    def step(P, ix):
        i, j, l = ix.i, ix.j, ix.l
        A, B = phase2_AB(P, ix, defects)
        jf = first_j(P, A)
        return Step(
            pe=l, op=EAC, target=s[A], operands=(w1[A, B],),
            guard=le(B, A),                                            # line 22; else MOVE
            # line 24: the sum travels on every step once it exists (printed: on every step)
            send=Move(s[A], when=True if "sum-before-first" in defects else le(jf, j)),
            first=eq(j, jf),
            prev=At("phase2a", dict(i=i, j=j - 1, l=wrap(l - 1, P.m))),
            sources=(w1_source(P, A, B),),
        )

    return Phase("phase2a", (Loop("i", 1, "k"), Loop("j", 1, "n")), step,
                 inverse=lambda P, key: phase2_at(P, *key),
                 doc="sum_A += exp(w'_AB) where B ≤ A, else forward sum_A; it walks one PE per step",
                 relies_on={"phase1": W1_FINAL_RELIES}, recount=PHASE2_RECOUNT)


def phase2b(defects, w1_source=w1_final()):
    """Phase 2 step 2, w = exp(w1) / sum where B ≤ A; algo3-fast derives its own."""
    def step(P, ix):
        i, j, l = ix.i, ix.j, ix.l
        A, B = phase2_AB(P, ix, defects)
        s_from = sum_source(P, i, j, l)
        return Step(
            pe=l, op=DIV, target=w[A, B], operands=(w1[A, B], s[A]), guard=le(B, A),   # line 26
            send=Copy(s[A], source=s_from),                                             # line 27
            sources=(w1_source(P, A, B), s_from),
        )

    return Phase("phase2b", (Loop("i", 1, "k"), Loop("j", 1, "n")), step,
                 inverse=lambda P, key: phase2_at(P, *key),
                 doc="w_AB = exp(w'_AB) / sum_A where B ≤ A; sum_A is copied along",
                 relies_on={"phase1": W1_FINAL_RELIES,
                            "phase2a": "sum_source: step 1 ends sum_A at j = n one PE back"},
                 recount=PHASE2_RECOUNT)


def phase3(defects, cols=PAPER):
    """Phase 3, y += w·v for B ≤ A; algo3-fast derives its own (other w sources)."""
    def step(P, ix):
        h, i, j, l = ix.h, ix.i, ix.j, ix.l
        A, B, guard = group_row(P, h, chain_column_at(P, ix))          # line 29: as phase 1
        C = _col(P, ix, defects, cols)
        first, B_prev = y_prev(P, A, B, C)
        w_from = Either(eq(j, 1),
                        At("phase2b", phase2_at(P, A, B)),             # the DIV on this PE
                        At("phase3", dict(h=h, i=i, j=j - 1, l=wrap(l - 1, P.m))))
        return Step(
            pe=l, op=MAC, target=y[A, C], operands=(w[A, B], v[B, C]), guard=guard,   # line 29
            send=Copy(w[A, B], when=guard),                                            # line 30
            first=first, prev=At("phase3", phase1_at(P, A, B_prev, C, cols)),
            sources=(w_from, HOME),
        )

    return Phase("phase3", _group_loops(cols), step,
                 inverse=lambda P, key: phase1_at(P, key[0], key[2], key[1], cols),   # key (A, C, B)
                 doc="y_A[C] += w_AB·v_B[C] for B ≤ A; w_AB is copied along, y stays",
                 relies_on={"phase2b": "phase2_at: where step 2 computes w[A, B] (short rows shifted)"})



def variant(defects=()) -> Schedule:
    """Algorithm 3 with some of the printed text's defects put back (see PRINTED_DEFECTS)."""
    name = variant_name("algo3", defects, PRINTED_DEFECTS)
    return Schedule(name, MASKED,
                    (phase1(defects), phase2a(defects), phase2b(defects), phase3(defects)),
                    home=home, doc="Algorithm 3: masked self-attention on a ring of m PEs",
                    notes={"claims": CLAIMS}, placement=None if defects else placement)


# What the paper states about Algorithm 3 (section V, Table II) and the cycle count of the loops:
# d·n(n+1)/2 MACs in each of phases 1 and 3 (d = n), n(n+1)/2 EAC and DIV.
CLAIMS = {"cycles": "(2*floor(n/2) + 4)*n**2/m", "MAC": "n**2*(n + 1)", "EAC": "n*(n + 1)/2",
          "DIV": "n*(n + 1)/2"}


ALGO3 = variant()
ALGO3_PRINTED = Schedule("algo3-printed", MASKED, variant(PRINTED_DEFECTS).phases, home=home,
                         doc="Algorithm 3 as printed (all four defects)", notes={"claims": CLAIMS})


def general() -> Schedule:
    """Algorithm 3 for any n, d with m | n and m | d: phases 1 and 3 over d columns."""
    w1_source = w1_final(GENERAL)
    return Schedule("algo3-general", MASKED,
                    (phase1((), GENERAL), phase2a((), w1_source), phase2b((), w1_source),
                     phase3((), GENERAL)),
                    home=home, doc="Algorithm 3 for n ≠ d: masked self-attention, m | n, m | d",
                    notes={"claims": GENERAL_CLAIMS}, shape=ANY_D, placement=placement)


# d·n(n+1)/2 MACs in each of phases 1 and 3; phases 1 and 3 take (n div 2 + 1)·k·d cycles each.
GENERAL_CLAIMS = {"cycles": "((2*floor(n/2) + 2)*d + 2*n)*n/m", "MAC": "n*(n + 1)*d",
                  "EAC": "n*(n + 1)/2", "DIV": "n*(n + 1)/2"}

ALGO3_GENERAL = general()
