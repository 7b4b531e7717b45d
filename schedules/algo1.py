"""Algorithm 1 of Yu & Fujita (plain self-attention), phase by phase, with the prover's witnesses.

Each formula stands beside the printed line it repairs (paper, Algorithm 1). The printed text has
`%` where integer division is meant in C (lines 7, 17) and `=` where `+=` is meant (lines 8, 24);
`docs/algo1.md` records what the verifier says about each printed form (see `variant`).

Inputs are distributed by column: q[A, C], k[B, C], v[B, C] start on PE ((C - 1) mod m) + 1, so PE l
holds the d/m columns C ≡ l (mod m) of every vector: O(n·d/m) words per PE.

Shapes: the paper takes d = n. Phases 1 and 3 take `cols`, how they walk the column index C
(`Columns`): `PAPER` (C ∈ [1, n], block i starting at column (i − 1)·m + l, the printed formulas) or
`GENERAL` (C ∈ [1, d] with d a parameter of its own, m | n and m | d, every block starting at
column l). Phase 2 (over A, B ∈ [1, n]) is the same in both.
"""

from __future__ import annotations

from dataclasses import dataclass

from ringproof.schedules.dsl import (DIV, EAC, HOME, MAC, At, Copy, Either, Loop, Move, Phase, Schedule,
                           Step, variant_name)
from ringproof.schedules.expr import and_, div, eq, ite, mod, ne, wrap
from ringproof.schedules.shape import ANY_D
from ringproof.schedules.problems import PLAIN, k, q, s, v, w, w1, y

PRINTED_DEFECTS = ("C-mod", "phase1-assign", "phase2-B-mod", "phase3-assign")


def _column(P, l, j, i, printed_mod=False):
    """C (lines 7, 17): the column PE l works on at step j of block i; C ≡ l (mod m)."""
    m, n = P.m, P.n
    jm = mod(j - 1, m) if printed_mod else div(j - 1, m)    # printed: (j-1) % m
    return mod(l + jm * m + (i - 1) * m - 1, n) + 1


@dataclass(frozen=True)
class Columns:
    """How phases 1 and 3 walk the column index C in the step loop j (runs of m steps; run
    div(j − 1, m) works on one column per PE, C ≡ l mod m).

    `extent`: the loop bound naming C's range ("n" or "d"). `rotate`: block i starts at column
    (i − 1)·m + l (the paper's, for extent "n" only), else at l. Without the rotation the run index of C needs no mod by
    the block count, which keeps C's formula inside the prover's windows when i ranges over k = n/m
    blocks but C over kd = d/m (the rotation mod d is not bounded by a few multiples of d when
    n ≫ d). `prev_run` (phase 3's `prev` witness) and `run` (the inverses) must agree with `column`.
    """

    extent: str
    rotate: bool

    def size(self, P):
        return getattr(P, self.extent)

    def blocks(self, P):
        return P.k if self.extent == "n" else P.kd

    def column(self, P, l, j, i, printed_mod=False):
        if self.rotate:
            return _column(P, l, j, i, printed_mod)       # the paper's (n columns)
        return l + (mod(j - 1, P.m) if printed_mod else div(j - 1, P.m)) * P.m

    def run(self, P, C, i):
        """The run div(j − 1, m) in which block i works on column C."""
        if self.rotate:
            return mod(div(C - 1, P.m) - (i - 1), self.blocks(P))
        return div(C - 1, P.m)

    def prev_run(self, P, j):
        """The run of block i − 1 on the column that run div(j − 1, m) of block i works on."""
        if self.rotate:
            return mod(div(j - 1, P.m) + 1, self.blocks(P))
        return div(j - 1, P.m)


PAPER = Columns("n", rotate=True)
GENERAL = Columns("d", rotate=False)


def _diagonal(P, l, j, i):
    """The block-i vector index constant along a diagonal l - j (lines 16 and 25)."""
    return mod(l - j, P.m) + (i - 1) * P.m + 1


def phase1_B(P, l, j, i):
    """B (line 6): like `_diagonal` shifted by one, so that w1[A, B] ends on PE ≡ B (mod m).
    Algorithm 2's phase 1 walks the same B (imported, so the two cannot drift apart)."""
    return mod(mod(l - j, P.m) + (i - 1) * P.m - 1, P.n) + 1


def phase1_at(P, A, B, C, cols=PAPER):
    """The phase-1 iteration computing q[A, C]·k[B, C] (coverage inverse of phase 1)."""
    m, kk = P.m, P.k
    r = mod(B, m)                                  # (l - j) mod m
    i = mod(div(B - r, m), kk) + 1
    l = mod(C - 1, m) + 1
    jq = cols.run(P, C, i)
    return dict(h=A, i=i, j=jq * m + mod(l - r - 1, m) + 1, l=l)


def phase2_at(P, A, B):
    """The phase-2 iteration (either step) working on w1[A, B]."""
    m, kk = P.m, P.k
    r = mod(A - 1, m)
    i = div(A - 1, m) + 1
    l = mod(B - 1, m) + 1
    jq = mod(div(B - 1, m) - (i - 1), kk)
    return dict(i=i, j=jq * m + mod(l - r - 1, m) + 1, l=l)


def phase3_at(P, A, C, B, cols=PAPER):
    """The phase-3 iteration computing w[A, B]·v[B, C]."""
    m = P.m
    r = mod(B - 1, m)
    i = div(B - 1, m) + 1
    l = mod(C - 1, m) + 1
    jq = cols.run(P, C, i)
    return dict(h=A, i=i, j=jq * m + mod(l - r - 1, m) + 1, l=l)


def _phase1(defects, cols=PAPER):
    def step(P, ix):
        h, i, j, l = ix.h, ix.i, ix.j, ix.l
        A = h                                                     # line 6
        B = phase1_B(P, l, j, i)                                  # line 6
        C = cols.column(P, l, j, i, "C-mod" in defects)           # line 7
        return Step(
            pe=l, op=MAC, target=w1[A, B], operands=(q[A, C], k[B, C]),   # line 8: +=
            send=Move(w1[A, B], when=ne(j, cols.size(P))),        # lines 9-10
            first=True if "phase1-assign" in defects else eq(j, 1),
            prev=At("phase1", dict(h=h, i=i, j=j - 1, l=wrap(l - 1, P.m))),
            sources=(HOME, HOME),
        )

    return Phase("phase1", (Loop("h", 1, "n"), Loop("i", 1, "k"), Loop("j", 1, cols.extent)), step,
                 inverse=lambda P, key: phase1_at(P, *key, cols=cols),
                 doc="w'_AB += q_A[C]·k_B[C]; the partial sum walks one PE per step")


def phase2_AB(P, ix, defects):
    """(A, B) of phase 2's iteration ix (lines 16-17): A constant along the diagonal, B its column.
    Public for the examples that build phase 2 from Algorithm 1's pieces."""
    A = _diagonal(P, ix.l, ix.j, ix.i)                                   # line 16
    B = _column(P, ix.l, ix.j, ix.i, "phase2-B-mod" in defects)          # line 17
    return A, B


W1_LAST_RELIES = ("w1_last: phase 1 ends w1[A, B] at the last step of its loop j, on PE ≡ B "
                  "(`phase1_B`, `phase1_at`, the send `when`)")


def w1_last(cols=PAPER):
    """Witness: the phase-1 iteration that finishes w1[A, B] (its last column step, on PE ≡ B).
    Rests on phase 1's B (`phase1_B`, ≡ B on PE l at j ≡ 0 mod m) and its loop j ending at the
    column extent, a multiple of m."""
    def at(P, A, B):
        return At("phase1", dict(phase1_at(P, A, B, 1, cols), j=cols.size(P), l=mod(B - 1, P.m) + 1))
    return at


_w1_last = w1_last()


def phase2a(defects, w1_source=_w1_last, relies=W1_LAST_RELIES):
    """Phase 2 step 1, the row sums, shared with Algorithm 2 (imported, not copied).
    `w1_source(P, A, B)`: the witness of where phase 1 left w1[A, B] (Algorithm 2 passes its own),
    `relies` what it assumes about phase 1."""

    def step(P, ix):
        i, j, l = ix.i, ix.j, ix.l
        A, B = phase2_AB(P, ix, defects)
        return Step(
            pe=l, op=EAC, target=s[A], operands=(w1[A, B],),      # line 18
            send=Move(s[A]),                                       # always, also at j = n
            first=eq(j, 1),
            prev=At("phase2a", dict(i=i, j=j - 1, l=wrap(l - 1, P.m))),
            sources=(w1_source(P, A, B),),
        )

    return Phase("phase2a", (Loop("i", 1, "k"), Loop("j", 1, "n")), step,
                 inverse=lambda P, key: phase2_at(P, *key),
                 doc="sum_A += exp(w'_AB); sum_A walks one PE per step",
                 relies_on={"phase1": relies})


def sum_source(P, i, j, l):
    """Where step 2 finds sum_A: the final step of step 1 sent it (j = 1), else the previous copy."""
    return Either(eq(j, 1),
                  At("phase2a", dict(i=i, j=P.n, l=wrap(l - 1, P.m))),   # final sum_A
                  At("phase2b", dict(i=i, j=j - 1, l=wrap(l - 1, P.m))))


def phase2b(defects):
    """Phase 2 step 2, w = exp(w1) / sum, shared with Algorithm 2."""
    def step(P, ix):
        i, j, l = ix.i, ix.j, ix.l
        A, B = phase2_AB(P, ix, defects)
        s_from = sum_source(P, i, j, l)
        return Step(
            pe=l, op=DIV, target=w[A, B], operands=(w1[A, B], s[A]),      # line 21
            send=Copy(s[A]),                                               # line 22
            sources=(At("phase2a", dict(i=i, j=j, l=l)), s_from),
        )

    return Phase("phase2b", (Loop("i", 1, "k"), Loop("j", 1, "n")), step,
                 inverse=lambda P, key: phase2_at(P, *key),
                 doc="w_AB = exp(w'_AB) / sum_A; sum_A is copied along",
                 relies_on={"phase2a": "sum_source: step 1 moves sum_A on every step and ends it at "
                                       "j = n one PE back; w1[A, B] read where step 1 read it (same A, B)"})


def phase3(defects, vv=v, cols=PAPER):
    """Phase 3, y += w·v, shared with Algorithm 2.
    `vv`: the array of the value vectors (x in the symmetric problem)."""

    def step(P, ix):
        h, i, j, l = ix.h, ix.i, ix.j, ix.l
        m = P.m
        A = h                                                      # as phase 1
        B = _diagonal(P, l, j, i)                                  # line 25
        C = cols.column(P, l, j, i, "C-mod" in defects)            # as phase 1
        jr = mod(j - 1, m)
        w_from = Either(eq(j, 1),
                        At("phase2b", phase2_at(P, A, B)),
                        At("phase3", dict(h=h, i=i, j=j - 1, l=wrap(l - 1, m))))
        return Step(
            pe=l, op=MAC, target=y[A, C], operands=(w[A, B], vv[B, C]),   # line 24: +=
            send=Copy(w[A, B]),                                            # line 26
            # y[A, C] stays on PE l; its terms come in runs of m steps, one run per block i
            first=True if "phase3-assign" in defects else and_(eq(i, 1), eq(jr, 0)),
            prev=At("phase3", dict(h=h, i=ite(eq(jr, 0), i - 1, i),
                                   j=ite(eq(jr, 0), cols.prev_run(P, j) * m + m, j - 1),
                                   l=l)),
            sources=(w_from, HOME),
        )

    return Phase("phase3", (Loop("h", 1, "n"), Loop("i", 1, "k"), Loop("j", 1, cols.extent)), step,
                 inverse=lambda P, key: phase3_at(P, *key, cols=cols),
                 doc="y_A[C] += w_AB·v_B[C]; w_AB is copied along, y stays",
                 relies_on={"phase2b": "phase2_at: step 2 computes w[A, B] on PE ≡ B (block i = "
                                       "(A−1) div m + 1, the diagonal of `_diagonal`)"})


def home(P, ref):
    """Inputs start on the PE of their column: ((C - 1) mod m) + 1."""
    return mod(ref.idx[1] - 1, P.m) + 1


def placement(P, ref):
    """y[A, C] ends where column C's inputs start: PE ((C - 1) mod m) + 1 (property placement)."""
    return home(P, ref)


# Memory hints (`Schedule.stays`, each checked by the prover, docs/proofs.md "Balance and memory"):
# the use of a datum that is the last of its stay on the PE, the copies no one uses where they
# arrive, and an iteration at which a PE holds the most.
STAYS = {
    "last": {("phase1", "q"): lambda P, ix: and_(eq(ix.i, P.k), eq(mod(ix.j, P.m), 0)),   # its column's last run
             ("phase1", "k"): lambda P, ix: eq(ix.h, P.n),                                 # the last query
             ("phase2b", "w1"): lambda P, ix: True,
             ("phase2b", "s"): lambda P, ix: True,         # each copy used once, then passed on
             ("phase3", "w"): lambda P, ix: True,
             ("phase3", "v"): lambda P, ix: eq(ix.h, P.n),
             ("phase3", "y"): lambda P, ix: and_(eq(ix.i, P.k), eq(mod(ix.j, P.m), 0))},
    "alone": {("phase2b", "s"): lambda P, ix: eq(ix.j, P.n),     # the next block's sum is used there
              ("phase3", "w"): lambda P, ix: eq(ix.j, P.n)},
    # block k of the first query: the inputs, k − 1 finished scores and one running (n(3n + 1)/m)
    "peak": [("phase1", lambda P: {"h": 1, "i": P.k, "j": 1, "l": 1})],
}


def variant(defects=()) -> Schedule:
    """Algorithm 1 with some of the printed text's defects put back (see PRINTED_DEFECTS)."""
    name = variant_name("algo1", defects, PRINTED_DEFECTS)
    return Schedule(name, PLAIN,
                    (_phase1(defects), phase2a(defects), phase2b(defects), phase3(defects)),
                    home=home, doc="Algorithm 1: plain self-attention on a ring of m PEs",
                    notes={"claims": CLAIMS}, placement=None if defects else placement,
                    stays={} if defects else STAYS)


# What the paper states about Algorithm 1 (section III-B, Table I); `counts` checks each claim.
CLAIMS = {"cycles": "(2*n**3 + 2*n**2)/m", "MAC": "2*n**3", "EAC": "n**2", "DIV": "n**2"}


ALGO1 = variant()
ALGO1_PRINTED = Schedule("algo1-printed", PLAIN, variant(PRINTED_DEFECTS).phases, home=home,
                         doc="Algorithm 1 as printed (all four defects)", notes={"claims": CLAIMS})


def general() -> Schedule:
    """Algorithm 1 for any n, d with m | n and m | d: the same phases over d columns."""
    return Schedule("algo1-general", PLAIN,
                    (_phase1((), GENERAL), phase2a((), w1_last(GENERAL)), phase2b(()),
                     phase3((), cols=GENERAL)),
                    home=home, doc="Algorithm 1 for n ≠ d: plain self-attention, m | n, m | d",
                    notes={"claims": GENERAL_CLAIMS}, shape=ANY_D, placement=placement)


# d·n² MACs in each of phases 1 and 3; phases 1 and 3 take n·k·d cycles each, phase 2 takes 2·k·n.
GENERAL_CLAIMS = {"cycles": "(2*n**2*d + 2*n**2)/m", "MAC": "2*n**2*d", "EAC": "n**2", "DIV": "n**2"}

ALGO1_GENERAL = general()
