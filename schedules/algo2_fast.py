"""algo2-fast: symmetric self-attention with no mirror copies (docs/optimal.md §3).

Each unordered pair {A, B} is computed once, as w1[A, B] with A ≥ B, and left on the PE
((A − 1) + (B − 1)) mod m + 1: for a fixed row A the map B ↦ that PE takes every value k times, so
phase 2's walking row sums find each of their n entries on their way, one per step (row A takes
B = j at step j), and phase 3 starts w[A, B] where phase 2 made it. No w1 travels after phase 1
(Algorithm 2 copies each computed w1 hops(h) PEs, in extra MOVE cycles), and the even-n middle
pairs are computed once. Phase 2 reads the pair under the name phase 1 gave it (the problem
declares w1[A, B] = w1[B, A]).

Phase 1: lane l of block (g, σ) carries the pairs whose index sum s = (A−1) + (B−1) mod n equals
(l − 1) + σ·m; g enumerates them: B − 1 = g while g ≤ ⌊s/2⌋, then g + s − ⌊s/2⌋ (A − 1 =
(s − B + 1) mod n ≥ B − 1), ⌊n/2⌋ + 1 blocks of g, the last half-empty for even n. The chain
starts on PE (l mod m) + 1 and walks the ring one PE per step over the n columns (x[·, C] on PE
((C − 1) mod m) + 1), ending at step n on PE l.
"""

from __future__ import annotations

from ringproof.schedules.algo1 import home, placement, sum_source
from ringproof.schedules.dsl import DIV, EAC, HOME, MAC, At, Copy, Either, Loop, Move, Phase, Schedule, Step
from ringproof.schedules.expr import and_, div, eq, ge, ite, le, mod, ne, wrap
from ringproof.schedules.problems import SYMMETRIC_ONCE, s, w, w1, x, y


def _pair(P, g, sums):
    """(A, B, valid): the pair of index sum `sums` (0-based, < n) in block g, A ≥ B, 1-based."""
    half = div(sums, 2)
    B0 = ite(le(g, half), g, g + sums - half)
    A0 = mod(sums - B0, P.n)
    return A0 + 1, B0 + 1, ge(A0, B0)


def lane_sum(P, A, B):
    """(A − 1) + (B − 1) mod n: the lane sum of pair {A, B} (algo2-even's chains end on it too)."""
    return mod(A + B - 2, P.n)


def _canonical(A, B):
    """w1 of {A, B} under the name phase 1 computes: the larger index first."""
    return w1[ite(ge(A, B), A, B), ite(ge(A, B), B, A)]


def block_of(P, A, B):
    """The block g of pair A ≥ B (inverse of `_pair`); algo2-even reads a pair's block with it."""
    sums = lane_sum(P, A, B)
    half = div(sums, 2)
    return ite(le(B - 1, half), B - 1, B - 1 - sums + half)


def phase1_at(P, A, B, C):
    """The phase-1 iteration doing x[A, C]·x[B, C] for A ≥ B."""
    m = P.m
    sums = lane_sum(P, A, B)
    e = mod(sums, m)
    pe = mod(C - 1, m) + 1
    return dict(g=block_of(P, A, B), sig=div(sums, m), j=div(C - 1, m) * m + mod(pe - 2 - e, m) + 1, l=e + 1)


def _inverse1(P, key):
    A, B, C = key
    big = ge(A, B)
    return phase1_at(P, ite(big, A, B), ite(big, B, A), C)


def _phase1():
    def step(P, ix):
        g, sig, j, l = ix.g, ix.sig, ix.j, ix.l
        m = P.m
        A, B, valid = _pair(P, g, l - 1 + sig * m)
        pe = mod(l - 1 + j, m) + 1
        C = pe + div(j - 1, m) * m
        return Step(
            pe=pe, op=MAC, target=w1[A, B], operands=(x[A, C], x[B, C]), guard=valid,
            send=Move(w1[A, B], when=and_(valid, ne(j, P.n))),     # the chain ends on PE l at j = n
            first=eq(j, 1), prev=At("phase1", dict(g=g, sig=sig, j=j - 1, l=l)),
            sources=(HOME, HOME),
        )

    return Phase("phase1", (Loop("g", 0, lambda P, ix: div(P.n, 2)), Loop("sig", 0, lambda P, ix: P.k - 1),
                            Loop("j", 1, "n")),
                 step, inverse=_inverse1,
                 doc="w'_AB += x_A[C]·x_B[C] once per pair A ≥ B; the chain ends on PE ((A−1)+(B−1)) mod m + 1")


def _w1_done(P, A, B):
    """Witness: the phase-1 iteration that finishes the pair {A, B} (step n, on PE of its lane)."""
    big = ge(A, B)
    a, b = ite(big, A, B), ite(big, B, A)
    sums = lane_sum(P, a, b)
    return At("phase1", dict(g=block_of(P, a, b), sig=div(sums, P.m), j=P.n, l=mod(sums, P.m) + 1))


def _row(P, ix):
    """Row A of lane l at step j of block i (Algorithm 1's diagonal): its sum is on PE l."""
    return mod(ix.l - ix.j, P.m) + (ix.i - 1) * P.m + 1


def phase2_at(P, A, B):
    """The phase-2 iteration (either step) working on row A's entry B."""
    return dict(i=div(A - 1, P.m) + 1, j=B, l=mod(A + B - 2, P.m) + 1)


RELIES = "_w1_done: phase 1 ends pair {A, B} at step n on PE ((A−1)+(B−1)) mod m + 1 (`_pair`, `phase1_at`)"


def phase2a(w1_done=None, relies=RELIES):
    """Phase 2 step 1, the row sums over the pairs phase 1 left in place; algo2-even shares it.
    `w1_done(P, A, B)`: the phase-1 iteration that finishes pair {A, B} (`_w1_done` here)."""
    w1_done = w1_done or _w1_done

    def step(P, ix):
        A, B = _row(P, ix), ix.j
        return Step(
            pe=ix.l, op=EAC, target=s[A], operands=(_canonical(A, B),),
            send=Move(s[A]), first=eq(ix.j, 1),
            prev=At("phase2a", dict(i=ix.i, j=ix.j - 1, l=wrap(ix.l - 1, P.m))),
            sources=(w1_done(P, A, B),),
        )

    return Phase("phase2a", (Loop("i", 1, "k"), Loop("j", 1, "n")), step,
                 inverse=lambda P, key: phase2_at(P, *key),
                 doc="sum_A += exp(w'_AB), B = j: the entry phase 1 left on this PE", relies_on={"phase1": relies})


def phase2b():
    """Phase 2 step 2, w = exp(w1) / sum where step 1 read w1; algo2-even shares it."""
    def step(P, ix):
        A, B = _row(P, ix), ix.j
        s_from = sum_source(P, ix.i, ix.j, ix.l)
        return Step(
            pe=ix.l, op=DIV, target=w[A, B], operands=(_canonical(A, B), s[A]),
            send=Copy(s[A]), sources=(At("phase2a", dict(i=ix.i, j=ix.j, l=ix.l)), s_from),
        )

    return Phase("phase2b", (Loop("i", 1, "k"), Loop("j", 1, "n")), step,
                 inverse=lambda P, key: phase2_at(P, *key),
                 doc="w_AB = exp(w'_AB) / sum_A; sum_A is copied along",
                 relies_on={"phase2a": "sum_source: step 1 moves sum_A on every step and ends it at j = n "
                                       "one PE back; w1 read where step 1 read it (same A, B)"})


def _column(P, l, j, i):
    """C of phase 3 (Algorithm 1's): ≡ l (mod m), one run of m steps per column."""
    return mod(l + div(j - 1, P.m) * P.m + (i - 1) * P.m - 1, P.n) + 1


def phase3_at(P, A, C, B):
    m = P.m
    i = div(B - 1, m) + 1
    l = mod(C - 1, m) + 1
    jq = mod(div(C - 1, m) - (i - 1), P.k)
    return dict(h=A, i=i, j=jq * m + mod(l - A - B + 1, m) + 1, l=l)


def phase3():
    """Phase 3, y += w·x from where phase 2 made w; algo2-even shares it."""
    def step(P, ix):
        h, i, j, l = ix.h, ix.i, ix.j, ix.l
        m = P.m
        A = h
        B = mod(l - j - A + 1, m) + (i - 1) * m + 1        # w[A, B] started on PE (A−1)+(B−1)+1
        C = _column(P, l, j, i)
        jr = mod(j - 1, m)
        w_from = Either(eq(j, 1), At("phase2b", phase2_at(P, A, B)),
                        At("phase3", dict(h=h, i=i, j=j - 1, l=wrap(l - 1, m))))
        return Step(
            pe=l, op=MAC, target=y[A, C], operands=(w[A, B], x[B, C]), send=Copy(w[A, B]),
            first=and_(eq(i, 1), eq(jr, 0)),
            prev=At("phase3", dict(h=h, i=ite(eq(jr, 0), i - 1, i),
                                   j=ite(eq(jr, 0), mod(div(j - 1, m) + 1, P.k) * m + m, j - 1), l=l)),
            sources=(w_from, HOME),
        )

    return Phase("phase3", (Loop("h", 1, "n"), Loop("i", 1, "k"), Loop("j", 1, "n")), step,
                 inverse=lambda P, key: phase3_at(P, *key),
                 doc="y_A[C] += w_AB·x_B[C]; w_AB is copied along from where phase 2 made it, y stays",
                 relies_on={"phase2b": "phase2_at: step 2 computes w[A, B] at j = B on PE (A−1)+(B−1) mod m + 1"})


# d·n(n+1)/2 MACs in phase 1 (each pair once), d·n² in phase 3; no MOVE cycle anywhere.
CLAIMS = {"MAC": "n**3 + n**2*(n + 1)/2", "EAC": "n**2", "DIV": "n**2"}

ALGO2_FAST = Schedule("algo2-fast", SYMMETRIC_ONCE, (_phase1(), phase2a(), phase2b(), phase3()), home=home,
                      doc="symmetric self-attention, each pair once, no mirror copies (docs/optimal.md)",
                      notes={"claims": CLAIMS}, placement=placement)
