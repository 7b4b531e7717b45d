"""Stay hints of the causal forwards of context parallelism (`Schedule.stays`, each checked by the
prover; docs/proofs.md "Balance and memory"), for the contiguous, striped and zigzag layouts. The
mask compares the key ((l − s) mod m)·k + b, or its striped or zigzag reading, with the row; the
counter splits that, with the iteration kept, into more than its cases, so each guard is given as
its reading in the cells of (l, s) where the mask is the diagonal (s = 1), every key of a lower
rank's block (2 ≤ s ≤ l) or of a higher one's (s > l) (stays["guard"], checked equal to the guard
at every iteration), and the marks are written in the same cells, free of the owner's mod m. With
them each layout's exact peak is derived; that is long (docs/performance.md), so the registered
targets carry them on request (`prove ring-attention-causal --exact-peak`, striped, zigzag).

The causal backward rings' hints (`causal_backward_stays`) are the non-causal backward's with the
same readings, and mark the inputs the mask leaves unused (dS and P above the diagonal). With them
the backwards' peaks are derived (contiguous, striped and zigzag, on request too); the contiguous
one's with one more candidate, at a row that moves with d.

The readings of each layout are fields of its `context_parallel.Layout` row (`Readings`); what
here is shared by every layout: the forms' branches and the candidate iterations common to all."""

from dataclasses import dataclass
from typing import Callable

from ringproof.schedules.expr import and_, div, eq, ge, gt, le, lt, mod, or_


@dataclass(frozen=True)
class Readings:
    """A causal layout's readings of the mask for the stay hints, in the cells of (l, s): own block
    (s = 1), a lower rank's (1 < s ≤ l), a higher rank's (s > l); each (P, h, ix) -> condition with
    h = k/2 (`half`), 1-based slots.

    `mask`: key ≤ row. `block_end`: a K (or V) block's last use on PE l: its last row, or where no
    row takes key slot b (the key after its last row), the copy passed on at the first row.
    `last_key`: the query's last key (the last ring step with one, its last key slot there).
    `radix(P)`: the digit the layout's owner reads (block k, stripe m, chunk h): dS and P above the
    diagonal are written in it. `step_2_key(P)`: the last key slot of the block received at step 2
    that its first row takes. `peaks`, `backward_peaks`: candidate iterations of the layout's own,
    beside the shared `PEAKS` and `BACKWARD_PEAKS` ((form, (P) -> {index: value, "l": PE}))."""

    mask: Callable
    block_end: Callable
    last_key: Callable
    radix: Callable
    step_2_key: Callable
    peaks: tuple = ()
    backward_peaks: tuple = ()


def half(P):
    """h = k/2 (zigzag's chunk, as the hints read it)."""
    return div(P.k, 2)


# Where each form of the forward's ring step is chosen (u = 1: keys; c = d + 1: the max and l).
BRANCHES = {
    "scores": lambda P, ix: and_(le(ix.u, 1), lt(ix.c, P.d + 1)),
    "o": lambda P, ix: and_(gt(ix.u, 1), lt(ix.c, P.d + 1)),
    "max": lambda P, ix: and_(le(ix.u, 1), ge(ix.c, P.d + 1)),
    "l": lambda P, ix: and_(gt(ix.u, 1), ge(ix.c, P.d + 1)),
}


def _readings(lay: Readings) -> tuple:
    """The marks the causal rings of a layout share, each (P, ix) -> condition: a K (or V) block's
    last use on a PE (`block_end`, and for m = 1 the first row), a query's last key (`last_key`), a
    copy sent at the last step arriving home unused (but for m = 1, k ≥ 2)."""

    def block(P, ix):
        return or_(lay.block_end(P, half(P), ix), and_(eq(P.m, 1), eq(ix.i, 1)))

    def query(P, ix):
        return lay.last_key(P, half(P), ix)

    def received(P, ix):
        return and_(eq(ix.s, P.m), or_(gt(P.m, 1), eq(P.k, 1)))

    return block, query, received


def causal_stays(lay: Readings, forms: dict) -> dict:
    """The hints of the causal forward of a layout (`lay`: its `Layout.readings`) whose ring step's
    forms are named `forms` (`context_parallel.FORMS`): a K or V block's last use on a PE is its
    last row, or, where no row of the PE takes it (its keys all after the rows), the copy passed on
    at the first row; q's and the running max's at the query's last key; the copies sent at the
    last step arrive home unused (but for m = 1, k ≥ 2); each form's guard read in the cells of
    (l, s)."""
    block, query, received = _readings(lay)

    def guard(form):
        return lambda P, ix: and_(BRANCHES[form](P, ix), lay.mask(P, half(P), ix))

    return {"last": {(forms["scores"], "q"): query, (forms["scores"], "k"): block,
                     (forms["o"], "v"): block, (forms["l"], "w1"): lambda P, ix: True,
                     (forms["l"], "mx"): query, ("out", "o"): lambda P, ix: True,
                     ("out", "l"): lambda P, ix: eq(ix.c, P.d), ("out", "y"): lambda P, ix: True},
            "alone": {(forms["scores"], "k"): received, (forms["o"], "v"): received},
            "guard": {forms[form]: guard(form) for form in BRANCHES},
            "peak": [(forms[form], at) for form, at in (*PEAKS, *lay.peaks)]}


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

# Where each form of the backward's ring step is chosen (u = 1: dq; u = 2: dk; u = 3: dv).
BACKWARD_BRANCHES = {
    "dq": lambda P, ix: le(ix.u, 1),
    "dk": lambda P, ix: and_(gt(ix.u, 1), le(ix.u, 2)),
    "dv": lambda P, ix: gt(ix.u, 2),
}


def above(radix):
    """Key B after query A (1-based tokens), read in the digits of radix `radix(P)` of both tokens
    (0-based): the entries of dS and P above the diagonal, which the mask leaves unused (held at
    cycle 0 only, on their query's PE). In the digits the layout's owner reads (`Readings.radix`)
    the counter splits both tokens into them: B > A alone leaves B unsplit, and its digit rule
    does not apply."""
    def after(P, A, B):
        w = radix(P)
        hi, lo = (div(B - 1, w), div(A - 1, w)), (mod(B - 1, w), mod(A - 1, w))
        return or_(gt(*hi), and_(eq(*hi), gt(*lo)))
    return after


def causal_backward_stays(lay: Readings, forms: dict) -> dict:
    """The hints of the causal backward ring of a layout (`lay`: its `Layout.readings`) whose ring
    step's forms are named `forms` (`context_parallel.BACKWARD_FORMS`): the non-causal backward's
    (`BACKWARD_STAYS`) with the causal forward's readings of the mask: a K block's last use on a PE as the forward's, a
    row's (q, dO, its dq sum) at the query's last key, dS's and P's at the last column; the copies
    of K sent at the last step arrive home unused, the dk and dv sums the last step moves arrive
    home and are kept; each form's guard read in the cells of (l, s)."""
    block, query, received = _readings(lay)
    unused = above(lay.radix)

    def column(P, ix):
        return eq(ix.c, P.d)

    def home(P, ix):
        return eq(ix.s, P.m)

    def masked(P, idx):
        return unused(P, *idx)

    def guard(form):
        return lambda P, ix: and_(BACKWARD_BRANCHES[form](P, ix), lay.mask(P, half(P), ix))

    return {"last": {(forms["dq"], "k"): block, (forms["dq"], "dq"): query,
                     (forms["dk"], "ds"): column, (forms["dk"], "q"): query,
                     (forms["dv"], "p"): column, (forms["dv"], "g"): query},
            "alone": {(forms["dq"], "k"): received},
            "home": {(forms["dk"], "dk"): home, (forms["dv"], "dv"): home},
            "unused": {"ds": masked, "p": masked},
            "guard": {forms[form]: guard(form) for form in BACKWARD_BRANCHES},
            "peak": [(forms[form], at) for form, at in (*BACKWARD_PEAKS, *lay.backward_peaks)] + [
                (forms["dk"], lambda P: {"s": 2, "i": 1, "b": lay.step_2_key(P), "u": 2, "c": 1, "l": P.m,
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
