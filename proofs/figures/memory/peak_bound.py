"""The largest of an occupancy over every cycle, for every size: which candidate is the most in each
regime of the sizes (`settled`), and that a form never exceeds it there (`at_most`): a form read as
a sum of pieces f·[condition], its comparisons decided from the index ranges where they settle them,
Z3 (within `budgets.PEAK_BOUND`) asked where they do not, an index split where one changes
(docs/proofs.md, "Balance and memory"). A comparison of the sizes in the candidates that a regime
does not decide cuts it in two. Where the most is a Max of candidates, the form is bounded
by the largest of them in one pass over the cases (a case's value at the ends of its ranges at most
one of them, or Z3 shown that it exceeds none). A case left with comparisons of the sizes alone is cut
on them (`Cases._on_sizes`). Every sign is asked of the tiers of `signs` (coefficients, the least
sizes a cell allows, sample points, Z3 last), and a query of the sizes that holds at a point near
them is answered "not shown" without Z3 (`Remembered`). Used by `stays.peak`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

import sympy

from ringproof.proofs.figures import comparisons, signs
from ringproof.proofs.figures.conjunction import put_in
from ringproof.proofs.figures.memory import sparse
from ringproof.proofs.figures.nests import SYMPY_PARAMETERS
from ringproof.proofs.memos import pure
from ringproof.proofs.ring.budgets import PEAK_BOUND

TOPS = 16         # the values at the ends of the ranges `Cases._tops` may ask about in one case
FEW = 4           # values of a size that `at_most` takes one by one where a cell's part leaves no more
CUTS = 3          # cuts deep `Cases._under_through` looks before Z3 is asked of a case


class Remembered:
    """A decider (`nests.Decider`) whose `never` answers are kept: `settled` and the cells of every
    regime `at_most` reads ask many of the same (a third of ring-attention's queries). `cases` and
    `symbols`: what the `Cases` of every cell found (each answer keyed by all it reads, the decider
    this one), shared by the cells and slots `stays.peak` bounds."""

    def __init__(self, decider):
        self.decider, self.known, self.cases, self.symbols = decider, {}, {}, {}

    @property
    def budget(self):
        return self.decider.budget

    def never(self, cond, ctx=(), rlimit: int | None = None) -> bool:
        key = (cond, tuple(ctx), rlimit)
        if key not in self.known:
            self.known[key] = not (not ctx and self._somewhere(cond)) and self.decider.never(cond, ctx, rlimit=rlimit)
        return self.known[key]

    def _somewhere(self, cond) -> bool:
        """Does `cond`, of the sizes alone, hold at a point near the least sizes it allows
        (`signs.somewhere`)? A model of Z3's query, found without it: the answer could only be
        "not shown"."""
        d = self.decider
        return not d.least and signs.somewhere(cond, d.requires, d.d_is_n)


def at_most(e, regime, ranges, decider, values=(0,)) -> bool:
    """Is e ≤ 0 (e ≤ the largest of `values`, forms of the sizes) wherever `regime` holds, at every
    point of `ranges`? Cell by cell of the regime (its disjuncts, each fixing some sizes, put into e),
    e read as a sum of pieces f·[condition] (`_pieces`) and split into cases (`Cases`); a part of a
    cell (`_split_on_sizes`) that leaves a size one value has it put in too. The pieces are read
    once and the cell's sizes put into each (into the whole of e, they would rebuild every Piecewise
    in it, which costs more than the cases), kept for the next call (`_fixed_pieces`: `stays.peak`
    asks of one form with each group's values)."""
    for cell in joined(sympy.Or.make_args(regime)):
        fixed = {a.lhs: a.rhs for a in sympy.And.make_args(cell)
                 if isinstance(a, sympy.Eq) and a.lhs.is_Symbol and a.rhs.is_Integer}
        rng = [(v, sympy.sympify(lo).xreplace(fixed), sympy.sympify(hi).xreplace(fixed)) for v, lo, hi in ranges]
        here = list(_fixed_pieces(sympy.sympify(e), tuple(sorted(fixed.items(), key=str))))
        most = [sympy.sympify(v).xreplace(fixed) for v in values]
        for part in _split_on_sizes(cell.xreplace(fixed), cell, here):
            # a size the part leaves one value (k ≥ 2, k ≤ 2) is put in, as a cell's fixed sizes are
            one = {x: sympy.Integer(lo) for x, (lo, hi) in comparisons.box(part, SYMPY_PARAMETERS).items() if lo == hi and x not in fixed}
            pieces = list(_fixed_pieces(sympy.sympify(e), tuple(sorted({**fixed, **one}.items(), key=str)))) if one else here
            if not Cases(decider, part.xreplace(one), [v.xreplace(one) for v in most]).hold(
                    pieces, [(v, lo.xreplace(one), hi.xreplace(one)) for v, lo, hi in rng]):
                return False
    return True


@pure(64)
def _fixed_pieces(e, fixed: tuple) -> tuple:
    """The pieces of e (`_pieces`) with the sizes `fixed` ((size, value), ...) put into each, those of
    one condition added up: a pure function, kept (`stays.peak` bounds each slot's one form in the
    cells of every group, some cells fixing the same sizes)."""
    here: dict = {}
    for f, c in _pieces_of(e):
        for g, b in _fixed_piece(f, c, fixed):
            here.setdefault(b, []).append(g)
    return tuple((f, c) for c, f in ((c, sympy.Add(*gs)) for c, gs in here.items()) if f != 0)


@pure(65536)
def _fixed_piece(f, c, fixed: tuple) -> tuple:
    """`_pieces` of one piece f·[c] with the sizes `fixed` put in, kept: the slots' forms share
    most of their pieces (each holds the totals of the slots before it)."""
    return tuple(_pieces(f.xreplace(dict(fixed)), put_in(c, fixed)))


@pure(16)
def _pieces_of(e) -> tuple:
    """`_pieces(e)`, kept: a pure function, asked of each slot's form once per group."""
    return tuple(_pieces(e))


def _split_on_sizes(cond, cell, pieces) -> list:
    """`cond` (the joined cell `cell` with its fixed sizes put in) as the conditions of its parts where
    a comparison of the sizes alone in the pieces' conditions takes both values at the part's corners
    (the cell's, 4 past its lower end where it has no upper): in each part it is decided once (Z3),
    not left open in every case of the indices (each query would carry it). The parts cover the
    cell whatever the corners show."""
    corners = [{}]
    for x, (lo, hi) in comparisons.box(cell, SYMPY_PARAMETERS).items():
        corners = [{**c, x: sympy.Integer(v)} for c in corners for v in sorted({lo, hi if hi is not None else lo + 4})]
    atoms = sorted({a for _, c in pieces for a in _comparisons(c) if a.free_symbols <= set(SYMPY_PARAMETERS)},
                   key=_text)
    parts = [(cond, corners)]
    for a in atoms:
        split = []
        for p, at in parts:
            yes = [c for c in at if a.xreplace(c) is sympy.true]
            no = [c for c in at if a.xreplace(c) is not sympy.true]
            split += [(sympy.And(p, a), yes), (sympy.And(p, sympy.Not(a)), no)] if yes and no else [(p, at)]
        parts = split
    return [p for p, _ in parts]


def joined(cells, loose: bool = False) -> list:
    """The cells of a regime (conjunctions of x = v and x ≥ v over the sizes), two that differ only
    in adjacent values of one size joined, as conditions. `loose` (for the reader, `tidied`): any
    comparison of one size with a number narrows its range too (k > 5, k < 13/2: k = 6), other
    atoms are kept beside the box, and only cells with the same such atoms are joined."""
    boxes = []
    for cell in cells:
        box, rest = {}, []
        for a in sympy.And.make_args(cell):            # each atom narrows its size's range (m = 2 and m ≥ 2: m = 2)
            got = comparisons.range_of(a, SYMPY_PARAMETERS) if loose else \
                (a.lhs, int(a.rhs), int(a.rhs) if isinstance(a, sympy.Eq) else None) \
                if isinstance(a, (sympy.Eq, sympy.GreaterThan)) and a.lhs.is_Symbol and a.rhs.is_Integer else None
            if got is not None:
                x, v, w = got
                lo, hi = box.get(x, (1, None))
                box[x] = (max(lo, v), hi if w is None else w if hi is None else min(hi, w))
            elif loose:
                rest.append(a)
            elif a is not sympy.true:
                return list(cells)                      # not a box: as it is
        if all(hi is None or lo <= hi for lo, hi in box.values()):
            boxes.append((box, frozenset(rest)))
    joined = True
    while joined:
        joined = False
        for i, j in ((i, j) for i in range(len(boxes)) for j in range(len(boxes)) if i != j):
            (a, ra), (b, rb) = boxes[i], boxes[j]
            apart = [x for x in set(a) | set(b) if a.get(x, (1, None)) != b.get(x, (1, None))]
            if ra == rb and len(apart) == 1 and a.get(apart[0], (1, None))[1] is not None and \
                    a.get(apart[0], (1, None))[1] + 1 == b.get(apart[0], (1, None))[0]:
                x = apart[0]
                boxes[i] = ({**a, x: (a.get(x, (1, None))[0], b.get(x, (1, None))[1])}, ra)
                del boxes[j]
                joined = True
                break
    return [sympy.And(*[sympy.Eq(x, lo) if lo == hi else sympy.And(*([x >= lo] if lo > 1 or not loose else []),
                                                                       *([x <= hi] if hi is not None else []))
                        for x, (lo, hi) in sorted(box.items(), key=lambda t: str(t[0]))],
                      *sorted(rest, key=str)) for box, rest in boxes]


def tidied(regime, decider):
    """`regime` (a condition of the sizes) as the reader is shown it: its cells' comparisons of one
    size with a number read as ranges and adjacent cells joined (`joined`, loose), kept only where
    Z3 (`decider`) shows the two the same condition for every k, m, kd ≥ 1; else as given."""
    cells = sympy.Or.make_args(regime)
    got = sympy.Or(*joined(cells, loose=True))
    if got == regime or not (decider.never(sympy.And(regime, sympy.Not(got)))
                             and decider.never(sympy.And(got, sympy.Not(regime)))):
        return regime
    return got


def _pieces(e, cond=sympy.true) -> list:
    """[(f, condition)] with e = Σ f·[condition], the conditions distinct (a Piecewise read as its
    pieces, each under its condition and the negation of the earlier ones)."""
    e = sympy.sympify(e)
    if not e.has(sympy.Piecewise):
        return [(e, cond)] if e != 0 and cond is not sympy.false else []
    out: dict = {}
    for t in sympy.Add.make_args(e):
        pw = [x for x in sympy.Mul.make_args(t) if isinstance(x, sympy.Piecewise)]
        if len(pw) != 1:
            parts = [(t, cond)]
        else:
            factor, before, parts = sympy.Mul(*[x for x in sympy.Mul.make_args(t) if x is not pw[0]]), [], []
            for f, c in pw[0].args:
                parts += _pieces(factor * f, sympy.And(cond, c, *[sympy.Not(b) for b in before]))
                before.append(c)
        for f, c in parts:
            out[c] = out.get(c, 0) + f
    return [(f, c) for c, f in out.items() if f != 0 and c is not sympy.false]


def _uncut(parts, ranges, v) -> bool:
    """Are `parts` of index v its first value, its last and those between (no comparison cut it)?"""
    _, lo, hi = next(r for r in ranges if r[0] == v)
    return parts == [lo, hi, (lo + 1, hi - 1)]


@dataclass(frozen=True)
class Case:
    """One case of a cell, a value: the form's pieces ((f, condition), ...), the indices' ranges
    ((v, lo, hi), ...) outer first, the conditions on the sizes, and the values the form is to be at
    most (the largest of them). `memo`: what `Cases` read of it (its comparisons decided, `Reading`)."""

    pieces: tuple
    ranges: tuple
    cond: object
    values: tuple
    memo: dict = field(default_factory=dict, init=False, compare=False, repr=False)


class Reading(NamedTuple):
    """What the strategies read of a case: the sum of the pieces that hold at every point (`sure`)
    and those not decided (`still`), their single-point indices put in (`one`); the comparisons
    left open (`still_open`), the indices of a wide range (`wide`) and those the open ones read
    (`opened`)."""

    sure: object
    still: list
    still_open: list
    wide: list
    opened: list
    one: dict


# A strategy takes (the search, a case) and returns True (proved), cases that together are this
# one (split: each must hold) or None (pass: the next strategy is tried); where all pass, the case
# is not shown. In order: the cheap ones first, Z3 before a split.

def empty(cases, case):
    """A range with no point: nothing to bound."""
    return True if any(cases._nonpos(_span(lo, hi) + 1, case.cond) for _, lo, hi in case.ranges) else None


def at_range_ends(cases, case):
    """Every piece decided: the sum's values at the ends of the ranges (`_tops`) at most the values."""
    r = cases.read(case)
    if not r.still and (tops := cases._tops(r.sure, case.ranges, case.cond)) is not None and \
            all(cases._under(t, case) for t in tops):
        return True
    return None


def through_single_values(cases, case):
    """The open comparisons read no wide index but one read through a single-valued index: cut
    without Z3 (`Cases._under_through`)."""
    r = cases.read(case)
    return True if r.still and not r.opened and cases._under_through(case, r.sure, r.still, r.one, CUTS) else None


def by_z3(cases, case):
    """No open comparison of a wide index, or one not read linearly (a floor): the case asked of Z3
    (within `budgets.PEAK_BOUND`), its pieces' decided comparisons put in."""
    r = cases.read(case)
    names = [v for v, _, _ in case.ranges]
    if r.opened and all(cases._linear(a, names) for a in r.still_open):
        return None
    e = sympy.expand(sparse.expr(r.sure)) + sum(
        (sympy.Piecewise((sparse.expr(f), cases._known(c, case)), (0, True)) for f, c in r.still), sympy.Integer(0))
    over = [sympy.expand(e - v) for v in case.values]
    if any(x.is_Number and x <= 0 for x in over):
        return True
    if not all(x.is_Number for x in over) and cases.decider.never(
            sympy.And(case.cond, *[sympy.Gt(x, 0, evaluate=False) for x in over]), case.ranges, rlimit=PEAK_BOUND):
        return True
    return None


def on_sizes(cases, case):
    """A case whose open comparisons read no wide index, cut on the sizes (`Cases._on_sizes`)."""
    r = cases.read(case)
    return None if r.opened else cases._on_sizes(case, ((r.sure, sympy.true), *r.still), r.one, r.still_open)


def split_an_index(cases, case):
    """An index split into its parts (`Cases._split`): a value (put in, its equations to the
    range's ends added to the conditions) or a range each."""
    r = cases.read(case)
    split = r.opened or [v for v in r.wide if sparse.has(r.sure, v) or any(sparse.has(f, v) for f, _ in r.still)]
    if not split:
        return None
    v, parts = cases._split(split, case, r.still_open)
    ranges = case.ranges
    at = [x for x, _, _ in ranges].index(v)
    pieces, (_, lo, hi) = ((r.sure, sympy.true), *r.still), ranges[at]
    return (Case(pieces, (*ranges[:at], (v, *part), *ranges[at + 1:]), case.cond, case.values) if isinstance(part, tuple)
            else Case(pieces, (*ranges[:at], (v, part, part), *ranges[at + 1:]),
                      sympy.And(case.cond, *[sympy.Le(a, b) for a, b in ((lo, part), (part, hi))
                                             if not signs.nonpos(sympy.expand(a - b))]), case.values)
            for part in parts)


STRATEGIES = (empty, at_range_ends, through_single_values, by_z3, on_sizes, split_an_index)


class Cases:
    """The search over the cases of one regime cell (`cond`, the form at most the largest of
    `values`): each case tried by the `strategies` in order (`STRATEGIES`), at most
    `budget.peak_cases` of them. The comparisons of a case's pieces are decided where its ranges
    decide them (an index's contribution read at the end of its range that makes it largest or
    least, `_extent`; a comparison of sizes alone by the sign oracle, then Z3)."""

    def __init__(self, decider, cond, values=(0,), strategies=STRATEGIES):
        self.decider, self.visited, self.strategies = decider, 0, strategies
        self.cond, self.values = cond, tuple(sympy.expand(v) for v in values)
        self.known, self.syms = getattr(decider, "cases", {}), getattr(decider, "symbols", {})   # `Remembered`'s
        self.signs = signs.Oracle(decider, self.known)

    def case(self, pieces, ranges) -> Case:
        """The cell's case of the form `pieces` over `ranges`, each piece's value an element of the
        ring of the sizes and the ranges' indices where it is a polynomial of them (`sparse.form`),
        read so by every strategy; sympy's expression where not (a floor) and where Z3 is asked."""
        R = sparse.ring_of(tuple(v for v, _, _ in ranges))
        return Case(tuple((sparse.form(R, f), c) for f, c in pieces), tuple(ranges), self.cond, self.values)

    def hold(self, pieces, ranges) -> bool:
        """Is the form at most the cell's values at every point of the ranges?"""
        return self.search(self.case(pieces, ranges))

    def search(self, case) -> bool:
        self.visited += 1
        if self.visited > self.decider.budget.peak_cases:
            return False
        for strategy in self.strategies:
            got = strategy(self, case)
            if got is not None:
                return got is True or all(self.search(c) for c in got)
        return False

    def read(self, case) -> Reading:
        """The case's `Reading`, kept in it."""
        if "read" not in case.memo:
            wide = [v for v, lo, hi in case.ranges if _span(lo, hi) != 0]
            one = {v: lo for v, lo, _ in case.ranges if v not in wide}
            sure, still = [], []
            for f, c in case.pieces:
                t = self._truth(c, case)
                if t is True:
                    sure.append(sparse.put(f, one))
                elif t is None:
                    still.append((sparse.put(f, one), c))
            still_open = [a for _, c in still for a in self._open(c, case)]
            read = {x for a in still_open for x in a.free_symbols}
            case.memo["read"] = Reading(sparse.total(sure), still, still_open, wide, [v for v in wide if v in read], one)
        return case.memo["read"]

    def _under_through(self, case, sure, still, one, depth) -> bool:
        """Before Z3 is asked of a case whose open comparisons read no wide index, but read one
        through a single-valued index (s ≤ 2 with s = l − 1, l from 2 to m): the wide index cut
        where such a comparison, the single values put in, changes (`_parts`), at most `depth` cuts
        deep; the case holds where in every part the pieces are decided and the tops of their sum
        are under the values (signs; no Z3, no case counted). False otherwise: the next strategy is
        tried, so a case this shows is one the search would have shown, or split further."""
        truths = [self._truth(c, case) for _, c in still]
        undecided = [piece for piece, t in zip(still, truths) if t is None]
        total = sparse.total([sure, *[f for (f, _), t in zip(still, truths) if t is True]])
        if not undecided:
            tops = self._tops(total, case.ranges, case.cond)
            return tops is not None and all(self._under(t, case) for t in tops)
        if depth == 0:
            return False
        put, ranges = tuple(one.items()), case.ranges
        atoms = sorted({put_in(a, put) for _, c in undecided for a in self._open(c, case)}, key=_text)
        names = [v for v, _, _ in ranges]
        for v in (v for v, lo, hi in ranges if v not in one and any(a.has(v) for a in atoms)):
            parts = self._parts(v, case, atoms)
            if _uncut(parts, ranges, v) or not all(isinstance(p, tuple) for p in parts):
                continue
            at = names.index(v)
            return all(self._under_through(replace(case, ranges=(*ranges[:at], (v, *p), *ranges[at + 1:])),
                                           total, undecided, one, depth - 1) for p in parts)
        for a in atoms:                 # one size against a number (3 − m ≤ −2): m ≥ 5, and m ≤ 4
            sides = [comparisons.range_of(a, SYMPY_PARAMETERS), comparisons.range_of(sympy.Not(a), SYMPY_PARAMETERS)]
            if None in sides:
                continue
            return all(self._under_through(
                replace(case, cond=sympy.And(case.cond, *([x >= lo] if lo > 1 else []), *([x <= hi] if hi is not None else []))),
                total, undecided, one, depth - 1) for x, lo, hi in sides)
        return False

    def _on_sizes(self, case, pieces, one, atoms):
        """The cases of a case Z3 did not show whose open comparisons read no index of a wide range,
        cut on the sizes: where its conditions leave a size FEW values or fewer (`comparisons.box`), one case
        per value, put into the pieces, ranges and values (its equation added to the conditions: Z3
        then compares numbers times sizes); else under an open comparison that reads the sizes alone
        once the single-point indices `one` are put in (i ≥ 5 at i = k), and under its negation
        (each added to the conditions, where it is then decided). None where there is none to cut."""
        cond, values, ranges = case.cond, case.values, case.ranges
        used = [f for p in pieces for f in p] + [b for r in ranges for b in r[1:]] + list(values)
        for x, (lo, hi) in comparisons.box(cond, SYMPY_PARAMETERS).items():
            if hi is None or hi - lo + 1 > FEW or not any(sparse.has(e, x) for e in used):
                continue
            return (Case(tuple((sparse.put(f, put), c.xreplace(put)) for f, c in pieces),
                         tuple((n, sympy.sympify(a).xreplace(put), sympy.sympify(b).xreplace(put)) for n, a, b in ranges),
                         sympy.And(cond, sympy.Eq(x, v)), tuple(sympy.expand(w.xreplace(put)) for w in values))
                    for v in range(lo, hi + 1) for put in ({x: sympy.Integer(v)},))
        known = set(sympy.And.make_args(cond))
        put = tuple(one.items())
        for a in sorted({put_in(a, put) for a in atoms}, key=_text):
            if a in (sympy.true, sympy.false) or not a.free_symbols <= set(SYMPY_PARAMETERS) or \
                    a in known or sympy.Not(a) in known:
                continue
            return (Case(pieces, ranges, sympy.And(cond, side), values) for side in (a, sympy.Not(a)))
        return None

    def _truth(self, c, case):
        """True, False or None (not decided) of the condition c at every point of the case's ranges."""
        return holds(c, lambda a: self._decided(a, case))

    def _open(self, c, case) -> list:
        """The comparisons of c not decided at every point of the case's ranges."""
        return [a for a in _comparisons(c) if self._decided(a, case) is None]

    def _known(self, c, case):
        """c with its comparisons decided on the case's ranges put in."""
        return c.xreplace({a: t for a in _comparisons(c) if (t := self._decided(a, case)) is not None})

    def _split(self, split, case, atoms) -> tuple:
        """(the index to split, its parts): the first of `split`, or where its range is not cut by an
        open comparison (only its first value, its last and those between), the first that is (the
        causal forwards' b − i ≥ 2: b cut at i + 2, where i would be split value by value)."""
        first = self._parts(split[0], case, atoms)
        if not _uncut(first, case.ranges, split[0]):
            return split[0], first
        for v in split[1:]:
            parts = self._parts(v, case, atoms)
            if not _uncut(parts, case.ranges, v):
                return v, parts
        return split[0], first

    def _parts(self, v, case, atoms) -> list:
        """The cases of index v: a value (put into the pieces) or a range (lo, hi), which together
        are its range: cut where an open comparison a·v + r ≤ 0 (a = ±1, r of the sizes and outer
        indices) changes, where the cut is shown within the range; else its first value, its last
        and those between."""
        ranges = case.ranges
        names = [x for x, _, _ in ranges]
        at = names.index(v)
        _, lo, hi = ranges[at]
        outer = set(names[:at]) | set(SYMPY_PARAMETERS)
        for a in atoms:
            read = comparisons.unit_in(a, v)
            if read is None:
                continue
            c, r = read
            if not r.free_symbols <= outer:
                continue
            within = ranges[:at]                    # a cut at an outer index: shown over its range
            if type(a) in (sympy.Eq, sympy.Ne):
                t = -r * c
                if self._nonpos(lo - t, case.cond, within) and self._nonpos(t - hi, case.cond, within):
                    return [(lo, t - 1), t, (t + 1, hi)]
            else:
                cut = -r if c == 1 else r - 1                          # true up to it, or from after it
                if self._nonpos(lo - 1 - cut, case.cond, within) and self._nonpos(cut - hi, case.cond, within):
                    return [(lo, cut), (cut + 1, hi)]
        return [lo, hi, (lo + 1, hi - 1)]

    def _linear(self, a, names) -> bool:
        """Does the comparison a read each index of `names` linearly, with a coefficient of the sizes?"""
        key = ("linear", a, tuple(names))
        if key not in self.known:
            p = comparisons.atom(a).p
            self.known[key] = p.is_polynomial(*names) and all(
                (got := comparisons.split(p, v)) is not None and not got[0].has(*names) for v in names if p.has(v))
        return self.known[key]

    def _under(self, x, case) -> bool:
        """Is x, a form of the sizes (an expression or a sparse polynomial, as `_tops` gives it), at
        most the largest of the case's values wherever its conditions hold? One value: `_nonpos`;
        several: at most one of them shown from the signs of the differences (`signs.nonpos`),
        else Z3 asked that x exceeds none of them (one query)."""
        cond, values = case.cond, case.values
        if isinstance(x, sparse.PolyElement):
            values = [sparse.poly(x.ring, v) for v in values]
            if any(v is None for v in values):
                return self._under(x.as_expr(), case)
            if len(values) == 1:
                return self._nonpos(x - values[0], cond)
            over = [x - v for v in values]
            if any(o.is_ground and o.LC <= 0 or (t := sparse.size_terms(o)) is not None and signs.nonpos(t, cond)
                   for o in over):
                return True
            over = [o.as_expr() for o in over]
        else:
            if len(values) == 1:
                return self._nonpos(x - values[0], cond)
            over = [sympy.expand(x - v) for v in values]
            if any(o.is_Number and o <= 0 or signs.nonpos(o, cond) for o in over):
                return True
        return self.decider.never(sympy.And(cond, *[sympy.Gt(o, 0, evaluate=False) for o in over]), rlimit=PEAK_BOUND)

    def _nonpos(self, x, cond, within=()) -> bool:
        """Is x, a form of the sizes (and of the indices of `within`, over their ranges there), ≤ 0
        wherever `cond` holds (`signs.Oracle`)? x an expression or a sparse polynomial (`sparse`)."""
        if isinstance(x, sparse.PolyElement):
            if x.is_ground:
                return bool(x.LC <= 0)
            terms = sparse.size_terms(x)
            if terms is not None:
                return self.signs.terms_nonpos(terms, x.as_expr(), cond)
            x = x.as_expr()
        return self.signs.nonpos(x, cond, within)

    def _tops(self, p, ranges, cond):
        """The values of p, a form linear in each index with a coefficient of the sizes, at the ends
        of the indices' ranges (inner first) where it may be largest: the end the coefficient's sign
        gives where it is shown, both where it is not (a linear form is largest at an end of its
        range); None where p is not so or the values are more than TOPS. Read as sparse polynomials
        where p and the ranges' ends are polynomials, as expressions otherwise (`sparse.reading`)."""
        r = sparse.reading(p, ranges)
        tops = [r.form]
        for at, lo, hi in r.ends:
            out = []
            for q in tops:
                lin = r.linear_in(q, at)
                if lin is None:
                    return None
                c, rest = lin
                if not c:
                    out.append(q)
                    continue
                if r.reads(c):
                    return None
                chosen = [hi] if self._nonpos(-c, cond) else [lo] if self._nonpos(c, cond) else [lo, hi]
                out += [r.put(c, rest, x) for x in chosen]
            tops = out
            if len(tops) > TOPS:
                return None
        return tops

    def _extent(self, p, ranges, cond):
        """(least, largest) of p over the ranges, p linear in each index with a coefficient of the
        sizes whose sign is shown; None otherwise (read as `_tops` reads it)."""
        r = sparse.reading(p, ranges)
        least = most = r.form
        for at, lo, hi in r.ends:
            got = []
            for q, largest in ((least, False), (most, True)):
                lin = r.linear_in(q, at)
                if lin is None:
                    return None
                c, rest = lin
                if c:
                    if r.reads(c):
                        return None
                    up = self._nonpos(-c, cond)
                    if not up and not self._nonpos(c, cond):
                        return None
                    q = r.put(c, rest, hi if up == largest else lo)
                got.append(q)
            least, most = got
        return least, most

    def _decided(self, a, case):
        """sympy.true or sympy.false where the comparison a holds at every point of the case's ranges
        or at none, else None. Kept in the case (`hold` asks of each comparison thrice), and per
        comparison, conditions and the ranges it reads."""
        got = case.memo.get(a, case)
        if got is not case:
            return got
        names = self._symbols(a)
        for v, lo, hi in reversed(case.ranges):          # the indices a reads, and those their bounds read
            if v in names:
                names = names | self._symbols(lo) | self._symbols(hi)
        read = tuple(r for r in case.ranges if r[0] in names)
        key = (a, case.cond, read)
        if key not in self.known:
            self.known[key] = self._decide(a, list(read), case.cond)
        case.memo[a] = self.known[key]
        return self.known[key]

    def _symbols(self, e) -> frozenset:
        """The free symbols of e (a comparison or a bound), kept."""
        got = self.syms.get(e)
        if got is None:
            got = self.syms[e] = frozenset(sympy.sympify(e).free_symbols)
        return got

    def _decide(self, a, ranges, cond):
        if not ranges:
            key = (a, cond)
            if key not in self.known:
                signed = signs.decided(a, cond)
                self.known[key] = signed if signed is not None else \
                    sympy.false if self.decider.never(sympy.And(cond, a)) else \
                    sympy.true if self.decider.never(sympy.And(cond, sympy.Not(a))) else None
            return self.known[key]
        t = comparisons.atom(a)
        got = None if t is None else self._extent(t.q, ranges, cond)
        if got is None:
            return None
        least, most = got
        if t.kind in ("eq", "ne"):
            off = self._nonpos(1 - least, cond) or self._nonpos(most + 1, cond)
            on = not off and self._nonpos(most, cond) and self._nonpos(-least, cond)
            yes, no = (on, off) if t.kind == "eq" else (off, on)
        else:                                                # q ≤ 0 (q = p + 1 for p < 0)
            yes = self._nonpos(most, cond)
            no = not yes and self._nonpos(1 - least, cond)
        return sympy.true if yes else sympy.false if no else None

@pure(65536)
def _span(lo, hi):
    """hi − lo, expanded: a range's width less one, kept (each case reads each of its ranges')."""
    return sympy.expand(sympy.sympify(hi) - lo)


@pure(65536)
def _text(a) -> str:
    """str(a), kept: the order cases read comparisons in (the same each run)."""
    return str(a)


@pure(65536)
def _comparisons(c) -> tuple:
    """The comparisons of the condition c, kept (each case reads those of each piece's)."""
    return tuple(c.atoms(sympy.core.relational.Relational))


def _at_least(v, w, cond, fixed, decider) -> bool:
    """Is v ≥ w wherever cond (which fixes the sizes `fixed`) holds?"""
    gap = sympy.expand((w - v).xreplace(fixed))
    if gap.is_Number:
        return bool(gap <= 0)
    return signs.nonpos(gap, cond) or decider.never(sympy.And(cond, sympy.Lt(v, w, evaluate=False)))


def _likely(values: list, cond, fixed: dict) -> list:
    """The values that may be the largest where `cond` holds: those largest at one point of it (its
    fixed sizes, the others at the least value it allows); all of them where that point is not
    found. No other can be at least every value there, so `settled` asks Z3 only about these."""
    least = signs.least_of(cond)
    point = {x: fixed.get(x, sympy.Integer(least.get(x, 1))) for x in SYMPY_PARAMETERS}
    if cond.xreplace(point) is not sympy.true:
        return values
    at = [v.xreplace(point) for v in values]
    if not all(x.is_Integer for x in at):
        return values
    top = max(at)
    return [v for v, x in zip(values, at) if x == top]


def _undominated(values: list, cond, fixed: dict, decider) -> list:
    """The values, distinct at the fixed sizes, of which none is shown at most another where `cond`
    holds (none where each is: `settled` gives up)."""
    at = [sympy.expand(v.xreplace(fixed)) for v in values]
    out: list = []
    for v, x in zip(values, at):
        if x in [sympy.expand(w.xreplace(fixed)) for w in out]:
            continue
        if not any(_at_least(w, v, cond, fixed, decider) for w, y in zip(values, at) if sympy.expand(x - y) != 0):
            out.append(v)
    return out


def parts(value, regime, decider) -> list:
    """[(v, the part of `regime` where v is the value)]: `value` itself, or for a Max(v1, ..., vr)
    each vj where it is at least every other: in each cell of the regime, each comparison vj − vi ≥ 0
    written without the factors whose sign Z3 shows there (`_without_signed`: (k − 3)(d − 2k) ≥ 0
    as d ≥ 2k for k ≥ 4), the cells Z3 shows empty left out. The parts cover the regime: at each
    size, the largest vj is the value of its part."""
    if not isinstance(value, sympy.Max):
        return [(value, regime)]
    out = []
    for v in value.args:
        cells = []
        for c in sympy.Or.make_args(regime):
            cell = sympy.And(c, *[_without_signed(sympy.expand(v - w), c, decider) for w in value.args if w is not v])
            if cell is not sympy.false and not decider.never(cell):
                cells.append(cell)
        if cells:
            out.append((v, sympy.Or(*cells)))
    return out


def _without_signed(p, cond, decider):
    """p ≥ 0 where `cond` holds, written without the factors of p whose sign Z3 shows there."""
    coeff, factors = sympy.factor_list(p)
    sign, kept = 1 if coeff > 0 else -1, sympy.Integer(1)
    for f, times in factors:
        if times % 2 == 0 and decider.never(sympy.And(cond, sympy.Eq(f, 0))):
            continue
        if times % 2 == 1 and decider.never(sympy.And(cond, f <= 0)):
            continue
        if times % 2 == 1 and decider.never(sympy.And(cond, f >= 0)):
            sign = -sign
            continue
        kept *= f ** times
    return sympy.Ge(sign * sympy.expand(kept), 0) if kept != 1 else sympy.true if sign > 0 else sympy.false


def settled(candidates: list, decider):
    """The largest of `candidates` (forms of the sizes k, m, kd with cases) as [(polynomial, [the
    regimes where it is the value])] over regimes of the sizes: each size's values below the
    largest constant its comparisons name, one by one, and the rest together; in each regime every comparison is decided (Z3), a regime cut on
    one that is not, one regime on each side (a candidate's condition 3d + 4 ≤ 2k), each candidate
    is a polynomial and one shown (Z3) at least every other is the value; where none is, a size
    that may be 1 or 2 is split so (twice at most), and else the value is the Max of those no other
    is shown to exceed (`parts` cuts it where each is the most). A regime whose value, at its fixed
    sizes, is another's joins it. None where a comparison is not decided."""
    exprs = [sympy.sympify(e) for e in candidates]
    atoms = {a for e in exprs for a in e.atoms(sympy.core.relational.Relational)}
    if any(not a.free_symbols <= set(SYMPY_PARAMETERS) for a in atoms):
        return None
    cuts: dict = {}
    for a in atoms:
        for x in a.free_symbols:
            consts = [abs(int(t)) for side in (a.lhs, a.rhs) for t in sympy.Add.make_args(sympy.expand(side)) if t.is_Integer]
            cuts.setdefault(x, set()).update(c + 1 for c in consts)
    regimes = [[]]
    for x in sorted(cuts, key=str):
        top = max(cuts[x] | {1})
        options = [(sympy.Eq(x, v), {x: sympy.Integer(v)}) for v in range(1, top)] + [(x >= top, {})]
        regimes = [r + [o] for r in regimes for o in options]
    regimes.sort(key=lambda r: sum(len(v) for _, v in r))      # the widest first: they lead the joins
    groups: list = []
    todo = [(sympy.And(*[c for c, _ in r]), {k: v for _, f in r for k, v in f.items()}, 0) for r in regimes]
    while todo:
        cond, fixed, depth = todo.pop(0)
        if decider.never(cond):
            continue
        truth, cut = {}, None
        for a in sorted(atoms, key=str):             # in one order: the cuts, and so the regimes, are the same each run
            known = a.xreplace(fixed)                # decided at once where the regime fixes its sizes
            if known in (sympy.true, sympy.false):
                truth[a] = known
            elif (signed := signs.decided(known, cond)) is not None:
                truth[a] = signed
            elif decider.never(sympy.And(cond, a)):
                truth[a] = sympy.false
            elif decider.never(sympy.And(cond, sympy.Not(a))):
                truth[a] = sympy.true
            elif known in sympy.And.make_args(cond):
                return None                          # cut on already, and still not decided
            else:
                cut = known
                break
        if cut is not None:           # not decided by the regime (3d + 4 ≤ 2k): a regime on each side
            todo = [(sympy.And(cond, cut), fixed, depth), (sympy.And(cond, sympy.Not(cut)), fixed, depth)] + todo
            continue
        values = [sympy.expand(v if (v := _read(e, truth)) is not None else sympy.piecewise_fold(e.xreplace(truth)))
                  for e in exprs]
        if any(v.has(sympy.Piecewise) for v in values):
            return None
        best = next((v for v in _likely(values, cond, fixed) if all(_at_least(v, w, cond, fixed, decider) for w in values)),
                    None)
        if best is None:              # no one largest: split a size that may be 1 or 2 into 1, 2 and the rest
            free = [x for x in SYMPY_PARAMETERS if x not in fixed and any(v.has(x) for v in values)
                    and not decider.never(sympy.And(cond, x <= 2))]
            if depth < 2 and free:
                x = free[0]
                todo += [(sympy.And(cond, sympy.Eq(x, v)), {**fixed, x: sympy.Integer(v)}, depth + 1) for v in (1, 2)]
                todo.append((sympy.And(cond, x >= 3), fixed, depth + 1))
                continue
            top = _undominated(values, cond, fixed, decider)
            if not top:
                return None
            best = sympy.Max(*top)                                              # the most of several
        for g in groups:
            either = isinstance(g[0], sympy.Max) or isinstance(best, sympy.Max)
            if not (either and signs.differ(g[0], best, fixed)) and (_alike(g[0], best, fixed) or
                                                               sympy.expand(g[0].xreplace(fixed) - best.xreplace(fixed)) == 0):
                g[1].append(cond)
                break
        else:
            groups.append([best, [cond]])
    return groups


def _read(e, truth: dict):
    """e with its comparisons put to their values in `truth` (sympy.true or sympy.false) and each
    case read so, without rebuilding its Piecewise (what xreplace and piecewise_fold give, as cheaply
    as the sums and products are added up); None where a comparison is not in `truth`, no case
    holds, or a node holding cases is not a sum, product or power."""
    if not e.has(sympy.Piecewise):
        return e
    if isinstance(e, sympy.Piecewise):
        for value, cond in e.args:
            t = holds(cond, truth.get)
            if t is None:
                return None
            if t:
                return _read(value, truth)
        return None
    if not isinstance(e, (sympy.Add, sympy.Mul, sympy.Pow)):
        return None
    args = [_read(a, truth) for a in e.args]
    return None if any(a is None for a in args) else e.func(*args)


def holds(c, truth):
    """True or False where the comparisons of the condition c that `truth` gives (`truth(a)`:
    sympy.true, sympy.false, or None where not known) decide it, else None."""
    if c is sympy.true or c is sympy.false:
        return c is sympy.true
    if isinstance(c, sympy.core.relational.Relational):
        t = truth(c)
        return None if t is None else t is sympy.true
    if isinstance(c, (sympy.And, sympy.Or)):
        stop = isinstance(c, sympy.Or)                  # the value that settles it
        got = [holds(a, truth) for a in c.args]
        return stop if stop in got else None if None in got else not stop
    if isinstance(c, sympy.Not):
        t = holds(c.args[0], truth)
        return None if t is None else not t
    return None


def _alike(v, w, fixed: dict) -> bool:
    """Are v and w, both Max, of the same arguments with the `fixed` sizes put in? Then they are one
    form there (a Max is built from the set of its arguments), shown without building either."""
    return isinstance(v, sympy.Max) and isinstance(w, sympy.Max) and \
        {a.xreplace(fixed) for a in v.args} == {a.xreplace(fixed) for a in w.args}
