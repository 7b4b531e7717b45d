"""Stay hints of the causal forwards of context parallelism (`Schedule.stays`, each checked by the
prover; docs/proofs.md "Balance and memory"), for the contiguous, striped and zigzag layouts. The
mask compares the key ((l − s) mod m)·k + b, or its striped or zigzag reading, with the row; the
counter splits that, with the iteration kept, into more than its cases, so each guard is given as
its reading in the cells of (l, s) where the mask is the diagonal (s = 1), every key of a lower
rank's block (2 ≤ s ≤ l) or of a higher one's (s > l) (stays["guard"], checked equal to the guard
at every iteration), and the marks are written in the same cells, free of the owner's mod m. With
them each layout's exact peak is derived, in 15 s to a minute of CPU, so the registered targets
carry them on request (`prove ring-attention-causal --exact-peak`, striped, zigzag).

The causal backward rings' hints (`causal_backward_stays`) are the non-causal backward's with the
same readings, and mark the inputs the mask leaves unused (dS and P above the diagonal). With them
the backwards' peaks are derived (contiguous, striped and zigzag: minutes of CPU each, so on
request; docs/context-parallel.md); the contiguous one's with one more candidate, at a row that moves with d."""

from ringproof.schedules.expr import and_, div, eq, ge, gt, ite, le, lt, mod, or_

# The mask key ≤ row in the cells of (l, s): own block (s = 1), a lower rank's (1 < s ≤ l), a
# higher rank's (s > l). h = k/2 (zigzag's chunk).
MASKS = {
    "contiguous": lambda P, h, ix: or_(and_(eq(ix.s, 1), le(ix.b, ix.i)), and_(gt(ix.s, 1), le(ix.s, ix.l))),
    "striped": lambda P, h, ix: or_(lt(ix.b, ix.i), and_(eq(ix.b, ix.i), le(ix.s, ix.l))),
    "zigzag": lambda P, h, ix: or_(and_(eq(ix.s, 1), le(ix.b, ix.i)),
                                   and_(gt(ix.s, 1), le(ix.s, ix.l), le(ix.b, h)),
                                   and_(gt(ix.s, ix.l), gt(ix.i, h))),
}

# Where no row of PE l takes key slot b of the block it holds (the key after its last row): the
# block's last use there is the copy passed on at the first row, else its last row. Zigzag's as the
# row of cases of single comparisons (its untaken keys, b > h for 1 < s ≤ l, in a conjunction
# split the block's ends past the counter's cases).
BLOCK_END = {
    "contiguous": lambda P, h, ix: or_(eq(ix.i, P.k), and_(eq(ix.i, 1), gt(ix.s, ix.l))),
    "striped": lambda P, h, ix: or_(eq(ix.i, P.k), and_(eq(ix.i, 1), eq(ix.b, P.k), gt(ix.s, ix.l))),
    "zigzag": lambda P, h, ix: eq(ix.i, ite(gt(ix.s, 1), ite(le(ix.s, ix.l), ite(gt(ix.b, h), 1, P.k), P.k), P.k)),
}

# The query's last key: the last ring step with one and its last key slot there.
LAST_KEY = {
    "contiguous": lambda P, h, ix: and_(eq(ix.s, ix.l), or_(and_(eq(ix.l, 1), eq(ix.b, ix.i)),
                                                            and_(gt(ix.l, 1), eq(ix.b, P.k)))),
    "striped": lambda P, h, ix: or_(and_(eq(ix.i, 1), eq(ix.s, ix.l), eq(ix.b, 1)),
                                    and_(gt(ix.i, 1), eq(ix.s, P.m),
                                         or_(and_(lt(ix.l, P.m), eq(ix.b, ix.i - 1)),
                                             and_(eq(ix.l, P.m), eq(ix.b, ix.i))))),
    # the key slot chosen by cases of single comparisons (`ite`), which the counter splits apart
    # cheaply, where a disjunction of conjunctions would be written disjoint by their negations
    "zigzag": lambda P, h, ix: or_(and_(le(ix.i, h), eq(ix.s, ix.l), eq(ix.b, ite(eq(ix.l, 1), ix.i, h))),
                                   and_(gt(ix.i, h), eq(ix.s, P.m),
                                        eq(ix.b, ite(lt(ix.l, P.m), P.k, ite(eq(P.m, 1), ix.i, h))))),
}

# Where each form of the forward's ring step is chosen (u = 1: keys; c = d + 1: the max and l).
BRANCHES = {
    "scores": lambda P, ix: and_(le(ix.u, 1), lt(ix.c, P.d + 1)),
    "o": lambda P, ix: and_(gt(ix.u, 1), lt(ix.c, P.d + 1)),
    "max": lambda P, ix: and_(le(ix.u, 1), ge(ix.c, P.d + 1)),
    "l": lambda P, ix: and_(gt(ix.u, 1), ge(ix.c, P.d + 1)),
}


def _h(P):
    return div(P.k, 2)


def _readings(lay: str) -> tuple:
    """The marks the causal rings of layout `lay` share, each (P, ix) -> condition: a K (or V)
    block's last use on a PE (`BLOCK_END`, and for m = 1 the first row), a query's last key
    (`LAST_KEY`), a copy sent at the last step arriving home unused (but for m = 1, k ≥ 2)."""
    block_end, last_key = BLOCK_END[lay], LAST_KEY[lay]

    def block(P, ix):
        return or_(block_end(P, _h(P), ix), and_(eq(P.m, 1), eq(ix.i, 1)))

    def query(P, ix):
        return last_key(P, _h(P), ix)

    def received(P, ix):
        return and_(eq(ix.s, P.m), or_(gt(P.m, 1), eq(P.k, 1)))

    return block, query, received


def causal_stays(lay: str, forms: dict) -> dict:
    """The hints of the causal forward of layout `lay` whose ring step's forms are named `forms`
    (`context_parallel.FORMS`): a K or V block's last use on a PE is its last row, or,
    where no row of the PE takes it (its keys all after the rows), the copy passed on at the first
    row; q's and the running max's at the query's last key; the copies sent at the last step
    arrive home unused (but for m = 1, k ≥ 2); each form's guard read in the cells of (l, s)."""
    mask, (block, query, received) = MASKS[lay], _readings(lay)

    def guard(form):
        return lambda P, ix: and_(BRANCHES[form](P, ix), mask(P, _h(P), ix))

    return {"last": {(forms["scores"], "q"): query, (forms["scores"], "k"): block,
                     (forms["o"], "v"): block, (forms["l"], "w1"): lambda P, ix: True,
                     (forms["l"], "mx"): query, ("out", "o"): lambda P, ix: True,
                     ("out", "l"): lambda P, ix: eq(ix.c, P.d), ("out", "y"): lambda P, ix: True},
            "alone": {(forms["scores"], "k"): received, (forms["o"], "v"): received},
            "guard": {forms[form]: guard(form) for form in BRANCHES},
            "peak": [(forms[form], at) for form, at in PEAKS + EXTRA_PEAKS.get(lay, [])]}


# Where a PE may hold the most (the largest is derived and proved): at cycle 0; in step 1 on PE m
# (a PE l ≥ 2 keeps its queries through step 1) with the next blocks arrived, its own not yet
# freed (the row before the last; k = 1: the first; or the last row's first score); in step 2 on PE 3 (m ≥ 3: the blocks it
# receives there are used), every row's sums begun (the second row's scores, or the first row's
# last term).
PEAKS = [("scores", lambda P: {"s": 1, "i": 1, "u": 1, "b": 1, "c": 1, "l": 1}),
         ("l", lambda P: {"s": 1, "i": P.k - 1, "u": 2, "b": 1, "c": P.d + 1, "l": P.m, "when": ge(P.k, 2)}),
         ("l", lambda P: {"s": 1, "i": 1, "u": 2, "b": 1, "c": P.d + 1, "l": P.m}),
         ("scores", lambda P: {"s": 1, "i": P.k, "u": 1, "b": 1, "c": 1, "l": P.m}),
         ("scores", lambda P: {"s": 2, "i": 2, "u": 1, "b": P.k, "c": 1, "l": 3,
                               "when": and_(ge(P.m, 3), ge(P.k, 2))}),
         ("l", lambda P: {"s": 2, "i": 1, "u": 2, "b": P.k, "c": P.d + 1, "l": 3, "when": ge(P.m, 3)})]

# Zigzag: for k = 2, m ≥ 3 PE 1 holds the most in step 2 at the last row's first score (a higher
# rank's block in, its own queries' sums begun). With it the largest candidate is the ring model's
# peak at every size tried, but its bound is not shown (docs/proofs.md, "Balance and memory").
# Striped: a row takes the keys of the slots before it (and its own where s ≤ l), so in step 2 the
# scores held peak at the row before the last, its own key (k = 2: the last row's first key).
EXTRA_PEAKS = {"striped": [
    ("scores", lambda P: {"s": 2, "i": P.k - 1, "u": 1, "b": P.k - 1, "c": 1, "l": 3,
                          "when": and_(ge(P.m, 3), ge(P.k, 2))}),
    ("scores", lambda P: {"s": 2, "i": P.k, "u": 1, "b": 1, "c": 1, "l": 3, "when": ge(P.m, 3)})],
    "zigzag": [("scores", lambda P: {"s": 2, "i": P.k, "u": 1, "b": 1, "c": 1, "l": 1, "when": ge(P.m, 3)})]}


# Where each form of the backward's ring step is chosen (u = 1: dq; u = 2: dk; u = 3: dv).
BACKWARD_BRANCHES = {
    "dq": lambda P, ix: le(ix.u, 1),
    "dk": lambda P, ix: and_(gt(ix.u, 1), le(ix.u, 2)),
    "dv": lambda P, ix: gt(ix.u, 2),
}


# The entries of dS and P above the diagonal (key B after query A, 1-based tokens), which the mask
# leaves unused: held at cycle 0 only, on their query's PE. Written in the digits the layout's
# owner reads (the block k, the stripe m, the chunk h), which the counter then splits both tokens
# into: B > A alone leaves B unsplit, and its digit rule does not apply.
def _after(size):
    """Key B after query A, read in the digits of radix `size` of both tokens (0-based)."""
    def above(P, A, B):
        w = size(P)
        hi, lo = (div(B - 1, w), div(A - 1, w)), (mod(B - 1, w), mod(A - 1, w))
        return or_(gt(*hi), and_(eq(*hi), gt(*lo)))
    return above


ABOVE = {"contiguous": _after(lambda P: P.k), "striped": _after(lambda P: P.m), "zigzag": _after(_h)}


def causal_backward_stays(lay: str, forms: dict) -> dict:
    """The hints of the causal backward ring of layout `lay` whose ring step's forms are named
    `forms` (`context_parallel.BACKWARD_FORMS`): the non-causal backward's (`BACKWARD_STAYS`) with
    the causal forward's readings of the mask: a K block's last use on a PE as the forward's, a
    row's (q, dO, its dq sum) at the query's last key, dS's and P's at the last column; the copies
    of K sent at the last step arrive home unused, the dk and dv sums the last step moves arrive
    home and are kept; each form's guard read in the cells of (l, s)."""
    mask, (block, query, received) = MASKS[lay], _readings(lay)

    def column(P, ix):
        return eq(ix.c, P.d)

    def home(P, ix):
        return eq(ix.s, P.m)

    def above(P, idx):
        return ABOVE[lay](P, *idx)

    def guard(form):
        return lambda P, ix: and_(BACKWARD_BRANCHES[form](P, ix), mask(P, _h(P), ix))

    return {"last": {(forms["dq"], "k"): block, (forms["dq"], "dq"): query,
                     (forms["dk"], "ds"): column, (forms["dk"], "q"): query,
                     (forms["dv"], "p"): column, (forms["dv"], "g"): query},
            "alone": {(forms["dq"], "k"): received},
            "home": {(forms["dk"], "dk"): home, (forms["dv"], "dv"): home},
            "unused": {"ds": above, "p": above},
            "guard": {forms[form]: guard(form) for form in BACKWARD_BRANCHES},
            "peak": [(forms[form], at) for form, at in BACKWARD_PEAKS + EXTRA_BACKWARD_PEAKS.get(lay, [])] + [
                (forms["dk"], lambda P: {"s": 2, "i": 1, "b": STEP_2_KEY[lay](P), "u": 2, "c": 1, "l": P.m,
                                         "when": ge(P.m, 2)})]}


# Where a PE may hold the most, all on PE m (the rows of dS and P it keeps are the most): the first
# dq and dk terms (m = 1: k = 1, or the first dk term); step 1's last row's first dq term and its
# row k − 1's first dk term (m ≤ 2, k ≥ 2), the dv sums of its last two rows at their own keys
# (m = 2: the last column of row k − 1, or the last iteration of the step); and step 2's first row
# at the last key it takes of the block received (m ≥ 3: every dk and dv sum of it begun; below).
BACKWARD_PEAKS = [
    ("dq", lambda P: {"s": 1, "i": 1, "b": 1, "u": 1, "c": 1, "l": P.m}),
    ("dk", lambda P: {"s": 1, "i": 1, "b": 1, "u": 2, "c": 1, "l": P.m}),
    ("dq", lambda P: {"s": 1, "i": P.k, "b": 1, "u": 1, "c": 1, "l": P.m}),
    ("dk", lambda P: {"s": 1, "i": P.k - 1, "b": 1, "u": 2, "c": 1, "l": P.m, "when": ge(P.k, 2)}),
    ("dv", lambda P: {"s": 1, "i": P.k - 1, "b": P.k - 1, "u": 3, "c": P.d, "l": P.m, "when": ge(P.k, 2)}),
    ("dv", lambda P: {"s": 1, "i": P.k, "b": P.k, "u": 3, "c": P.d, "l": P.m})]

# Contiguous: in step 1 PE m's occupancy at a row's first dk term is −i² + (3d + 1)i plus terms of
# the sizes (rows 2 .. k − 1), most at the row ⌊(3d + 1)/2⌋ (d even: rows 3d/2 and 3d/2 + 1 tie);
# where that row is below k − 1 (3d + 4 ≤ 2k) the fixed rows above miss it (n = 36, m = 3, d = 6).
EXTRA_BACKWARD_PEAKS = {"contiguous": [
    ("dk", lambda P: {"s": 1, "i": div(3 * P.d + 1, 2), "b": 1, "u": 2, "c": 1, "l": P.m,
                      "when": le(3 * P.d + 4, 2 * P.k)})]}

# Step 2's first row at the last key of the block received that it takes (zigzag: the head's, h).
STEP_2_KEY = {"contiguous": lambda P: P.k, "striped": lambda P: P.k, "zigzag": _h}
