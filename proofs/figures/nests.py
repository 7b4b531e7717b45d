"""Exact counts of the integer points of a loop nest under a guard, in closed form (sympy), or
`Unknown` with the reason.

The nest is v1 ∈ [lo1, hi1], v2 ∈ [lo2, hi2], ... (outer to inner; a bound is a formula of the
parameters and the outer indices), the guard any and/or/not of comparisons. Sound by construction:

- the guard becomes disjoint conjunctions of atoms `e ≤ 0` (a disjunction p ∨ q is p, then ¬p ∧ q;
  a negated comparison its integer complement, a ≠ b is a < b, then a > b; a strict or negated
  comparison with rational coefficients is first scaled to integer ones); in the cases `lifted`
  splits a guard into, a conjunction holding both e ≤ 0 and 1 − e ≤ 0 has no point and counts 0;
- the innermost index v is eliminated first: every atom with v must read ±v + r ≤ 0 (r free of v,
  else `Unknown`), i.e. a lower or an upper bound of v; with several lowers (uppers) the count splits
  into the cases where each one is the largest (smallest), ties going to the first, and each case
  carries its emptiness condition lo ≤ hi (an empty range counts 0, never a reversed sum); the
  summand, a polynomial in v, is summed by Faulhaber's formulas, exact for every lo ≤ hi + 1;
- a condition that no longer has any index is decided where it can be (always true: dropped;
  never: the case is empty) and kept as a Piecewise condition otherwise;
- an atom c·X + Y ≤ 0 whose index has a parameter coefficient c (a block size) is split by the
  digit rule (`_radix`), each use proved; a guard with x mod m or a Piecewise is first split into
  disjoint cases by `lifted`, each split proved;
- `keep` outer indices (a PE index l) may stay in the form, which then holds over their ranges.

Deciding (`Decider`) a bound dominates another, or a condition, uses only what holds at every point:
the ranges of the outer loops, n = k·m, d = kd·m, k, kd, m ≥ 1 and the shape's side condition. The sign of a polynomial in
the parameters is read from its coefficients; the rest goes to Z3 under a resource limit, and an
answer Z3 does not give leaves the case split (never a guess).
"""

from __future__ import annotations

import math
import time

import sympy
import z3

from ringproof.proofs.figures import signs
from ringproof.proofs.figures.signs import K, KD, M, SIZES as SYMPY_PARAMETERS
from ringproof.proofs.memos import pure
from ringproof.proofs.ring.budgets import Budget
from ringproof.schedules.expr import evaluate, lift, var
from ringproof.schedules.shape import D_IS_N, Shape

MAX_CASES = 256          # disjoint conjunctions of a guard, or pieces of a nest, before `Unknown`


class Unknown(Exception):
    """The nest or its guard is outside what this module counts exactly; the message says why."""


def count(loops, cond=True, decider: "Decider | None" = None, keep: int = 0, settle: bool = True) -> sympy.Expr:
    """|{(v1, ..., vr) in the nest `loops` ([(symbol, lo, hi)], outer first) : cond}| as a closed
    form in the parameters (k, m, kd); raises Unknown (module doc). `cond` may be a list of
    disjoint conditions (`lifted`): their counts add. The `keep` outermost indices
    are not summed: the form is then one of them too, valid at every point of their ranges.
    `settle=False`: a case's condition is kept even where it always holds (the caller settles it).
    Kept in the decider (a definite answer, or the Unknown): the counts and the per-PE forms count
    some nests twice (algo3-fast's phases 1 and 3 are one nest)."""
    decider = decider or Decider()
    key = (tuple(loops), tuple(cond) if isinstance(cond, list) else cond, keep, settle)
    hit = decider.counted.get(key)
    if hit is None:
        try:
            hit = (_count(loops, cond, decider, keep, settle), None)
        except Unknown as e:
            hit = (None, str(e))
        decider.counted[key] = hit
    if hit[1] is not None:
        raise Unknown(hit[1])
    return hit[0]


def _count(loops, cond, decider: "Decider", keep: int, settle: bool) -> sympy.Expr:
    names = [v for v, _, _ in loops]
    base = []
    for v, lo, hi in loops[keep:]:
        base += [sympy.expand(sympy.sympify(lo) - v), sympy.expand(v - sympy.sympify(hi))]
    total = []
    split = isinstance(cond, list)
    disjoint = cond if split else [cond]
    loop_names = set(names)
    for conj in [r for part in disjoint for c in cases(sympy.sympify(part)) if not (split and _contradictory(c))
                 for r in _radix(c, loops, loop_names, decider)]:
        pieces = [(sympy.Integer(1), base + conj)]
        for i in reversed(range(keep, len(names))):
            outer = loops[:i]
            pieces = [q for p in pieces for q in _eliminate(names[i], p, names, outer, decider)]
            if len(pieces) > MAX_CASES:
                raise Unknown(f"more than {MAX_CASES} cases of bounds")
        for f, cons in pieces:
            got = _case(f, cons)
            if isinstance(got, sympy.Piecewise) and settle and \
                    decider.never(sympy.And(sympy.Not(got.args[0].cond), sympy.Ne(f, 0)), loops[:keep]):
                got = f
            total.append(got)
    return sympy.Add(*total)         # once: a sum rebuilt per term grows with the square of the terms


def _case(f, cons: list):
    """f where every e of `cons` is ≤ 0, else 0: the Piecewise((f, ∧ e ≤ 0), (0, True)) that sympy's
    evaluation writes, built without it (it rebuilds each condition two or three times): the
    condition's comparisons written as it writes them (`_at_most_zero`)."""
    cond = sympy.And(*[_at_most_zero(e) for e in cons])
    if f == 0 or cond is sympy.false:
        return sympy.Integer(0)
    return f if cond is sympy.true else sympy.Piecewise((f, cond), (0, True), evaluate=False)


@pure(65536)
def _at_most_zero(e):
    """e ≤ 0 as a Piecewise's evaluation writes it (sympy's `_canonical_coeff`: 2k − 4 ≤ 0 as k ≤ 2)."""
    from sympy.functions.elementary.piecewise import _canonical_coeff
    rel = e <= 0
    for _ in range(4):           # to its fixed point, as the evaluation goes: 1 − a + km ≤ 0, km − a ≤ −1, a − km ≥ 1
        rel, before = _canonical_coeff(rel), rel
        if rel == before:
            break
    return rel


def _contradictory(conj: list) -> bool:
    """Does the conjunction (atoms e ≤ 0, expanded) hold both e ≤ 0 and 1 − e ≤ 0? It has no point
    then, and counts 0. (A MOVE where a phase sends only when it computes has the guard g ∧ ¬g; each
    case of its split holds the same atom both ways. Asked of split cases only: on a guard as
    written, algo3's phase 1 MOVEs would be counted 0 rather than not derived, so the counts would
    go on to phase 2a's, slow to find them not derived either, and --json would name phase 2a.)"""
    atoms = set(conj)
    return any(_opposite(e) in atoms for e in conj)


@pure(65536)
def _opposite(e):
    """1 − e, expanded (kept: the cases of one guard hold the same atoms)."""
    return sympy.expand(1 - e)


def lifted(cond, loops, decider: "Decider") -> list:
    """`cond` as disjoint conditions without Mod(x, m) and Piecewise, whose union is `cond` at
    every point of the nest `loops`: Mod(x, m) is x − q·m in the case q·m ≤ x ≤ q·m + m − 1, for
    each q in the range of x ÷ m, which must be proved (Z3, over the loops' ranges) to lie within
    −2 .. 2; a Piecewise is each of its pieces under that piece's condition and the negation of
    the earlier ones. Raises Unknown where a range is not proved. The cases are taken up depth
    first in their order (q ascending, pieces as written), so a failing split is met as soon as its
    first failing case is (algo3-fast's MOVEs of phase 2a: the reverse order meets it last, slowly)."""
    todo, out = [sympy.sympify(cond)], []
    while todo:
        f = todo.pop()
        if len(todo) + len(out) > MAX_CASES:
            raise Unknown(f"{cond} splits into more than {MAX_CASES} cases")
        mods = sorted((x for x in f.atoms(sympy.Mod) if not x.args[0].has(sympy.Mod, sympy.Piecewise)), key=_first)
        pieces = sorted((p for p in f.atoms(sympy.Piecewise) if not any(a.has(sympy.Piecewise) for a in p.args)),
                        key=_first)
        if mods:
            split = _mod_cases(f, mods[0], loops, decider)
        elif pieces:
            split, before = [], []
            for e, c in pieces[0].args:
                split.append(sympy.And(*before, c, f.xreplace({pieces[0]: e})))
                before.append(sympy.Not(c))
        elif f.has(sympy.Mod, sympy.Piecewise):
            raise Unknown(f"cannot split {f}")
        else:
            out.append(f)
            continue
        todo += reversed(split)
    return out


@pure(4096)
def _first(atom):
    """The order in which `lifted` splits atoms: the longest first, the same in every process (a
    set's order is not, and some orders cost the counts far more splits). Kept: printing a long
    atom is slow, and a case split meets most atoms again."""
    text = str(atom)
    return -len(text), text


def split_digits(loops, cond, keep: int = 0):
    """(loops, cond) with every index v that the guard reads inside Mod(x, c) or floor(x/c), for a
    block size c of the parameters (m, k), from the `keep`-th loop on, written in radix c:
    v = lo + c·vq + vr, vq ∈ [0, L/c − 1], vr ∈ [0, c − 1], where its range's length L is a
    multiple of c (L/c a polynomial in k, m, kd with integer coefficients, free of indices). A
    bijection of the nest, so every count is unchanged; x mod c and x div c then read vr and vq,
    which `lifted` and the digit rule split; floor(vr/c) is 0 and vr mod c is vr there. None if no
    index is split."""
    cond = sympy.sympify(cond)
    names = {v for v, _, _ in loops}
    reads: dict = {}                        # index -> the block sizes it is read in
    for x in cond.atoms(sympy.Mod):
        for v in x.args[0].free_symbols & names:
            reads.setdefault(v, []).append(x.args[1])
    for x in cond.atoms(sympy.floor):
        den = sympy.fraction(sympy.together(x.args[0]))[1]
        for v in x.args[0].free_symbols & names:
            reads.setdefault(v, []).append(den)
    out, subs, small = [], {}, {}
    for at, (v, lo, hi) in enumerate(loops):
        lo, hi = sympy.expand(sympy.sympify(lo).xreplace(subs)), sympy.expand(sympy.sympify(hi).xreplace(subs))
        size = next((c for c in reads.get(v, []) if c in (M, K) and _multiple(hi - lo + 1, c)), None)
        if at >= keep and size is not None and f"{v}_q" not in map(str, names) and \
                not (lo.has(*names) or hi.has(*names)):
            vq, vr = sympy.Symbol(f"{v}_q", integer=True), sympy.Symbol(f"{v}_r", integer=True)
            out += [(vq, sympy.Integer(0), sympy.expand((hi - lo + 1) / size) - 1), (vr, sympy.Integer(0), size - 1)]
            subs[v] = lo + size * vq + vr
            small.update({sympy.floor(vr / size): sympy.Integer(0), sympy.Mod(vr, size): vr})
        else:
            out.append((v, lo, hi))
    if not subs:
        return None
    cond = cond.xreplace(subs)
    for _ in range(3):              # floor((c·vq + vr)/c) is vq + floor(vr/c) once its argument is expanded
        cond = cond.xreplace({f: f.func(*[sympy.expand(a) for a in f.args]) for f in cond.atoms(sympy.floor, sympy.Mod)})
    return out, cond.xreplace(small)


def _mod_cases(f, mod, loops, decider: "Decider") -> list:
    x, mm = mod.args
    if not decider.holds(sympy.expand(1 - mm), ()):
        raise Unknown(f"cannot split {mod}: its modulus is not shown positive")
    qs = [q for q in range(-2, 3) if not decider.holds(sympy.expand(x - q * mm + 1), loops)
          and not decider.holds(sympy.expand(q * mm + mm - x), loops)]        # the cases not empty
    if not qs or not decider.holds(sympy.expand(min(qs) * mm - x), loops) or \
            not decider.holds(sympy.expand(x - max(qs) * mm - mm + 1), loops):
        raise Unknown(f"cannot bound {x} within −2m .. 3m − 1 ({mod})")
    return [sympy.And(x - q * mm >= 0, x - q * mm <= mm - 1, f.xreplace({mod: sympy.expand(x - q * mm)}))
            for q in qs]


# ----------------------------------------------------------------------------- guards


def cases(f) -> list[list]:
    """Disjoint conjunctions whose union is f, each a list of expressions e meaning e ≤ 0."""
    out = _cases(f, True)
    if len(out) > MAX_CASES:
        raise Unknown(f"the guard {f} splits into more than {MAX_CASES} cases")
    return out


def _cases(f, positive: bool) -> list[list]:
    if f is sympy.true or f is True:
        return [[]] if positive else []
    if f is sympy.false or f is False:
        return [] if positive else [[]]
    if isinstance(f, sympy.Not):
        return _cases(f.args[0], not positive)
    if isinstance(f, (sympy.And, sympy.Or)):
        conj = isinstance(f, sympy.And) == positive
        if conj:             # each part's cases found once, not once per case of the parts before it
            out = [[]]
            for part in f.args:
                got = _cases(part, positive)
                out = [a + b for a in out for b in got]
                if len(out) > MAX_CASES:
                    raise Unknown(f"the guard {f} splits into more than {MAX_CASES} cases")
            return out
        out, before = [], [[]]          # p1, ¬p1 ∧ p2, ¬p1 ∧ ¬p2 ∧ p3, ...: disjoint
        for part in f.args:
            yes, no = _cases(part, positive), _cases(part, not positive)
            out += [a + b for a in before for b in yes]
            before = [a + b for a in before for b in no]
            if len(out) + len(before) > MAX_CASES:
                raise Unknown(f"the guard {f} splits into more than {MAX_CASES} cases")
        return out
    if isinstance(f, sympy.Rel):
        a, b = f.lhs, f.rhs
        exact = positive and isinstance(f, (sympy.LessThan, sympy.GreaterThan, sympy.Equality))
        den = 1 if exact else denominator(a - b)      # e < 0 ⇔ e + 1 ≤ 0 holds of an integer e
        a, b = (a * den, b * den) if den > 1 else (a, b)                # only: a rational e is scaled
        le = {sympy.LessThan: (a - b,), sympy.StrictLessThan: (a - b + 1,),
              sympy.GreaterThan: (b - a,), sympy.StrictGreaterThan: (b - a + 1,)}
        if isinstance(f, (sympy.Equality, sympy.Unequality)):
            equal = isinstance(f, sympy.Equality) == positive
            if equal:
                return [[sympy.expand(a - b), sympy.expand(b - a)]]
            return [[sympy.expand(a - b + 1)], [sympy.expand(b - a + 1)]]
        for cls, (e,) in le.items():
            if isinstance(f, cls):
                return [[sympy.expand(e)]] if positive else [[sympy.expand(1 - e)]]
    raise Unknown(f"cannot count under the condition {f}")


def denominator(e) -> int:
    """The lcm of the denominators of e's rational coefficients (1 where one is not rational)."""
    terms = sympy.expand(e).as_coefficients_dict()
    if not all(c.is_Rational for c in terms.values()):
        return 1
    return math.lcm(*[int(c.q) for c in terms.values()])


def _radix(conj: list, loops, names: set, decider: "Decider") -> list[list]:
    """The conjunction `conj` (atoms e ≤ 0) as disjoint conjunctions in which every index has an
    integer coefficient: an atom c·X + Y ≤ 0 whose indices carry a positive parameter c (a block
    size k, a chunk k/2) is X ≤ −1, or X = 0 and Y ≤ 0 -- exact where −c < Y ≤ c at every point of
    the nest under the conjunction's other atoms, which is proved (Z3) first, Y taken as Y + t·c for
    the first t in 0, ±1, ±2 that satisfies it. Unknown where none is proved."""
    todo, out = [list(conj)], []
    while todo:
        c = todo.pop()
        at = next((a for a, e in enumerate(c) if _digit(e, names) is not None), None)
        if at is None:
            out.append(c)
            continue
        e, rest = c[at], c[:at] + c[at + 1:]
        size, X, Y = _digit(e, names)
        for t in (0, 1, -1, 2, -2):
            low, high = sympy.expand(1 - size - (Y + t * size)), sympy.expand(Y + t * size - size)
            if decider.holds(low, loops, rest) and decider.holds(high, loops, rest):
                x, y = sympy.expand(X - t), sympy.expand(Y + t * size)
                todo += [rest + [x + 1], rest + [x, -x, y]]
                break
        else:
            raise Unknown(f"{e} ≤ 0: {size} multiplies an index and the rest is not shown within "
                          f"(−{size}, {size}]")
        if len(todo) + len(out) > MAX_CASES:
            raise Unknown(f"more than {MAX_CASES} cases of digits")
    return out


def _digit(e, names: set):
    """(c, X, Y) with e = c·X + Y, X integral, where some index has the non-constant coefficient
    c·(integer) in e; None if every index's coefficient is an integer (or no such split is found)."""
    return _digit_of(sympy.expand(e), frozenset(names))


@pure(4096)
def _digit_of(e, names: frozenset):
    """`_digit` of an expanded e (algebra only, so kept: a case split asks it of the same atoms
    again in every conjunction)."""
    for v in sorted(e.free_symbols & names, key=str):
        co = sympy.expand(e.coeff(v))
        if co.is_Integer or co.has(*names):
            continue
        _, size = co.as_content_primitive()
        size = size if sympy.expand(-size).could_extract_minus_sign() else -size
        if size.is_Symbol or isinstance(size, sympy.floor) or size.is_Mul:
            c = sympy.Dummy("c")
            poly = sympy.expand(e.xreplace({size: c})) if not size.is_Mul else sympy.expand(e.subs(size, c))
            if poly.has(*size.free_symbols) and poly.coeff(c).has(*size.free_symbols):
                continue
            X, Y = sympy.expand(poly.coeff(c, 1)), sympy.expand(poly.coeff(c, 0))
            if sympy.expand(poly - c * X - Y) != 0 or X.has(c) or Y.has(c) or not _integral(X):
                continue
            return size, X, Y
    return None


def _multiple(t, c) -> bool:
    """Is t an integer multiple of c at every integer point (t/c a polynomial with integer
    coefficients)?"""
    q = sympy.expand(t / c)
    return q.is_polynomial(*q.free_symbols) and _integral(q)


def _integral(e) -> bool:
    """Is e an integer at every integer point (a polynomial with integer coefficients in integer
    symbols and floors)?"""
    terms = sympy.expand(e).as_coefficients_dict()
    return all(c.is_Integer and all(x.is_integer for x in t.free_symbols | t.atoms(sympy.floor))
               for t, c in terms.items())


# ----------------------------------------------------------------------------- elimination


def _eliminate(v, piece, names, outer, decider: "Decider") -> list:
    """Sum `piece` = (summand, atoms) over v: one piece per case of its bounds, v gone. The atoms
    without v pass through; what the atoms with v give is kept in the decider (the counts sum a
    phase's nest with the PE index l, the per-PE forms without: the same inner sums)."""
    f, cons = piece
    rest = [e for e in cons if not e.has(v)]
    bounds = tuple(e for e in cons if e.has(v))
    key = (f, v, bounds, tuple(names), tuple(outer))
    hit = decider.eliminated.get(key)
    if hit is None:
        hit = decider.eliminated[key] = _bounded_sums(v, f, bounds, names, outer, decider)
    return [(g, rest + kept) for g, kept in hit]


def _bounded_sums(v, f, bounds, names, outer, decider: "Decider") -> list:
    """[(f summed over v between one case of its bounds, that case's atoms)] (`_eliminate`)."""
    lowers, uppers = [], []
    for e in bounds:
        r = sympy.expand(e.subs(v, 0))
        coef = e.coeff(v)
        if (coef.has(v) or not coef.is_Integer or coef == 0 or r.has(v)
                or sympy.expand(e - coef * v - r) != 0):
            raise Unknown(f"{e} ≤ 0 is not affine in {v} with a constant coefficient")
        other = r.free_symbols & (set(names) - {v})
        if abs(coef) != 1 and other:
            raise Unknown(f"{e} ≤ 0: {v} has coefficient {coef} beside other indices")
        if coef > 0:
            uppers.append(-r if coef == 1 else sympy.floor(-r / coef))
        else:
            lowers.append(r if coef == -1 else sympy.ceiling(r / -coef))
    if not lowers or not uppers:
        raise Unknown(f"index {v} has no {'lower' if not lowers else 'upper'} bound")
    ctx = outer
    lowers = _dominant(lowers, ctx, decider, upper=False)
    uppers = _dominant(uppers, ctx, decider, upper=True)
    out = []
    for i, lo in enumerate(lowers):
        for j, hi in enumerate(uppers):
            new = ([sympy.expand(x - lo + (1 if a < i else 0)) for a, x in enumerate(lowers) if a != i]
                   + [sympy.expand(hi - x + (1 if b < j else 0)) for b, x in enumerate(uppers) if b != j]
                   + [sympy.expand(lo - hi)])
            kept = _settle(new, ctx, decider)
            if kept is None:
                continue
            out.append((summed(f, v, lo, hi), kept))
    return out


def _dominant(bounds: list, ctx, decider: "Decider", upper: bool) -> list:
    """The bounds with duplicates and provably dominated ones left out (for uppers the smallest
    counts, for lowers the largest)."""
    out: list = []
    for b in bounds:
        if any(sympy.expand(b - x) == 0 for x in out):
            continue
        # drop b if some kept x is always at least as tight; drop kept ones b is tighter than
        if any(decider.holds(sympy.expand((x - b) if upper else (b - x)), ctx) for x in out):
            continue
        out = [x for x in out if not decider.holds(sympy.expand((b - x) if upper else (x - b)), ctx)]
        out.append(b)
    return out


def _settle(atoms: list, ctx, decider: "Decider") -> list | None:
    """The atoms not always true at the points of `ctx`; None if one is never true (an empty case)."""
    kept = []
    for e in atoms:
        if decider.holds(e, ctx):
            continue
        if decider.holds(sympy.expand(1 - e), ctx):
            return None
        kept.append(e)
    return kept


@pure(None)
def _faulhaber(p: int):
    x, t = sympy.symbols("_x _t", integer=True)
    return x, sympy.expand(sympy.summation(t ** p, (t, 1, x)))


def summed(f, v, lo, hi) -> sympy.Expr:
    """Σ_{v=lo}^{hi} f for a polynomial f in v: F(hi) − F(lo − 1), exact whenever lo ≤ hi + 1."""
    try:
        poly = sympy.Poly(sympy.expand(f), v)
    except sympy.PolynomialError:
        raise Unknown(f"the summand {f} is not a polynomial in {v}") from None
    total = sympy.Integer(0)
    for (p,), coef in poly.terms():
        if coef.has(v):
            raise Unknown(f"the summand {f} is not a polynomial in {v}")
        x, F = _faulhaber(p)
        total += coef * (F.subs(x, hi) - F.subs(x, lo - 1))
    return sympy.expand(total)


# ----------------------------------------------------------------------------- deciding


class Decider:
    """Is e ≤ 0 at every point of a context (the outer loops' ranges, the parameters ≥ 1)? True only
    when shown; definite answers are facts and cached as such, a Z3 `unknown` never is.
    `shape`: the free sizes (kd is k where d is n); `budget`: Z3's seed, timeout and rlimit."""

    def __init__(self, shape: Shape = D_IS_N, budget: Budget = Budget()):
        self.d_is_n, self.budget = not shape.is_free("d"), budget
        self.requires = side_condition(shape)
        self.least, self._exists = _least(shape)
        self._known: dict = {}
        self._points: dict = {}       # (ctx, side condition) -> `signs.points` of it
        self._base = None             # (side condition, `env`'s answer) once built
        self._z3_terms: dict = {}     # symbols named -> {sympy formula: its Z3 term} (`_translated`)
        self.counted: dict = {}       # `count`'s arguments -> (its form, None) or (None, why Unknown)
        self.eliminated: dict = {}    # `_eliminate`'s summand, index, atoms with it, nest -> its pieces

    def env(self) -> tuple[dict, list]:
        """The Z3 parameters and what holds of them: k, m, kd ≥ 1, the side condition, and each
        derived parameter defined by a condition (a `Least`) pinned by it once shown to exist (else
        it is any integer: what is shown holds for its value too). Built once per side condition
        (a caller may set `requires` before asking); each caller gets its own copies."""
        if self._base is None or self._base[0] is not self.requires:
            self._base = (self.requires, self._built_env())
        env, facts = self._base[1]
        return dict(env), list(facts)

    def _translated(self, e, env: dict):
        """`to_z3(e, env)`, kept per set of symbols named in env: every env this decider builds names
        a symbol x by z3.Int(str(x)) (kd by k where d is n), so a formula's term depends on nothing
        else; the loop bounds and facts of a nest are asked about in many queries."""
        return to_z3(e, env, self._z3_terms.setdefault(frozenset(env), {}))

    def _built_env(self) -> tuple[dict, list]:
        env = {K: z3.Int("k"), M: z3.Int("m")}
        env[KD] = env[K] if self.d_is_n else z3.Int("kd")
        facts = [env[K] >= 1, env[M] >= 1, env[KD] >= 1]
        facts += [to_z3(self.requires, env)] if self.requires is not None else []
        if self.least:
            env.update({x: z3.Int(str(x)) for x in self.least})
            if self.exists():
                facts += [to_z3(c, env) for conds in self.least.values() for c in conds]
        return env, facts

    def exists(self) -> bool:
        """Is it shown that each `Least` parameter exists at every size (lo ≤ hi and cond(hi))?"""
        if self._exists is not True and self._exists is not False:
            env = {K: z3.Int("k"), M: z3.Int("m")}
            env[KD] = env[K] if self.d_is_n else z3.Int("kd")
            self._exists = self._check(
                env[K] >= 1, env[M] >= 1, env[KD] >= 1, *([to_z3(self.requires, env)] if self.requires is not None else []),
                z3.Not(to_z3(self._exists, env.copy() | {x: z3.Int(str(x)) for x in self.least}))) == z3.unsat
        return self._exists

    def holds(self, e, ctx=(), facts=()) -> bool:
        """`facts`: further atoms f ≤ 0 that hold at the points asked about."""
        e = sympy.expand(e)
        if e.is_Number:
            return bool(e <= 0)
        free = e.free_symbols
        ctx = tuple(ctx) if free - set(SYMPY_PARAMETERS) else ()
        facts = tuple(facts) if ctx else ()
        key = (e, ctx, facts)
        if key in self._known:
            return self._known[key]
        answer = signs.sign(e) if free <= set(SYMPY_PARAMETERS) else None
        if answer is None and self._refuted(e, ctx, facts):
            answer = False
        if answer is None and ctx and signs.bounded(e, ctx, facts):
            answer = True
        if answer is None:
            answer = self._z3(e, ctx, facts)
        if answer is not None:
            self._known[key] = answer
        return bool(answer)

    def never(self, cond, ctx=(), rlimit: int | None = None) -> bool:
        """Is `cond` (of the parameters, and of the indices of `ctx`) false for every k, m, kd ≥ 1
        (and every point of ctx's ranges)? (A case that vanishes.) `rlimit`: Z3's, where not the
        counter's."""
        if self._refuted(cond, ctx, (), condition=True):
            return False
        try:
            env, facts = self.env()
            for v, lo, hi in ctx:
                env[v] = z3.Int(str(v))
                facts += [self._translated(lo, env) <= env[v], env[v] <= self._translated(hi, env)]
            query = self._translated(cond, env)
        except NoZ3:
            return False
        return self._check(query, *facts, rlimit=rlimit) == z3.unsat

    def _refuted(self, e, ctx, facts, condition: bool = False) -> bool:
        """Is there a point of ctx where the facts hold and e > 0 (`condition`: e holds)? Tried on the
        small points of `witness` before Z3 (a model of Z3's query: its answer could only be "not
        shown"); False where none is found or the shape has a `Least` parameter."""
        if self.least:
            return False
        ctx = tuple(ctx)
        key = (ctx, self.requires)
        pts = self._points.get(key)
        if pts is None:
            pts = self._points[key] = signs.points(SYMPY_PARAMETERS, ctx, self.requires, self.d_is_n)
        names = (*SYMPY_PARAMETERS, *[v for v, _, _ in ctx])
        fn = signs.compiled(e, names) if pts else None
        checks = [signs.compiled(f, names) for f in facts] if fn is not None else [None]
        if fn is None or None in checks:
            return False
        return signs.refuted(fn, checks, pts, strict_above=not condition)

    def _check(self, *assertions, rlimit: int | None = None):
        """Z3's answer on the assertions (`rlimit`: where not the counter's): asked with the
        preprocessing first (`solver`), and where that gives up, without it. The peak's cases fix
        indices by equalities (i = 2, s = l − 1) that solve-eqs removes before the nonlinear core sees
        them (striped's unsat peak cases: Z3 is much slower on them without it); a few with a
        div of the sizes it leaves harder (ring-attention-causal-bwd: 4 of 6,200 unknown within the
        rlimit, each proved without it, and every unknown makes the bound split its case). The
        backstop timeout is shared, half for the first: a nonlinear case the rlimit does not stop
        (the backwards' peaks: 23 in striped-bwd's first 1,300) spends no more wall time than one
        query did, and each solver proves some that the other does not within it."""
        start, total = time.monotonic(), self.budget.timeout_ms
        for plain in (False, True):
            s = self.solver(plain)
            if rlimit is not None:
                s.set("rlimit", rlimit)
            left = total - int(1000 * (time.monotonic() - start))
            s.set("timeout", max(1, left if plain else total // 2))
            s.add(*assertions)
            got = s.check()
            if got != z3.unknown:
                break
        return got

    def solver(self, plain: bool = False):
        """A fresh solver under the counter's rlimit, with the preprocessing of `normalize.new_solver`
        (simplify, propagate-values, solve-eqs) unless `plain`."""
        s = z3.Solver() if plain else z3.Then("simplify", "propagate-values", "solve-eqs", "smt").solver()
        s.set("rlimit", self.budget.count_rlimit)
        s.set("timeout", self.budget.timeout_ms)
        s.set("random_seed", self.budget.seed)
        return s

    def _z3(self, e, ctx, more=()):
        try:
            env, facts = self.env()
            for v, lo, hi in ctx:
                env[v] = z3.Int(str(v))
                facts += [self._translated(lo, env) <= env[v], env[v] <= self._translated(hi, env)]
            facts += [self._translated(f, env) <= 0 for f in more]
            claim = self._translated(e, env) <= 0
        except NoZ3:
            return None
        r = self._check(*facts, z3.Not(claim))
        return True if r == z3.unsat else (False if r == z3.sat else None)


def side_condition(shape: Shape):
    """The shape's side condition in k, m, kd (sympy), or None where it has none."""
    if shape.requires is None:
        return None
    P = shape.record({"n": K * M, "m": M, "k": K, "d": KD * M, "kd": KD}.__getitem__)
    return sympy.sympify(evaluate(lift(shape.requires(shape.record(var))), vars(P)))


def _least(shape: Shape):
    """({symbol: its defining conditions in k, m, kd} of the shape's `Least` parameters, the condition
    that each exists: lo ≤ hi and cond(hi)), or ({}, True) where it has none."""
    from ringproof.schedules.dsl import with_derived
    from ringproof.schedules.shape import Least
    least = {name: fn for name, fn in shape.derived if isinstance(fn, Least)}
    if not least:
        return {}, True
    P = with_derived(dict(shape.derived), shape.record({"n": K * M, "m": M, "k": K, "d": KD * M, "kd": KD}.__getitem__))
    out, exists = {}, []
    for name, fn in least.items():
        x = getattr(P, name)
        lo, hi = fn.bounds(P)
        exists += [sympy.Le(lo, hi), fn.cond(P, hi)]
        out[x] = [sympy.Le(lo, x), sympy.Le(x, hi), fn.cond(P, x), sympy.Or(sympy.Eq(x, lo), sympy.Not(fn.cond(P, x - 1)))]
    return out, sympy.And(*exists)


class NoZ3(Exception):
    """A formula `to_z3` does not translate."""


def _over_denominator(x):
    """(num, den) with x = num/den: for a sum of integral terms with rational coefficients, den the
    lcm of the coefficients' denominators (sympy's `together` is slow on long sums of
    floors); else as `together` writes it."""
    x = sympy.expand(x)
    terms = x.as_coefficients_dict()
    if all(c.is_Rational for c in terms.values()) and all(sympy.fraction(t)[1] == 1 for t in terms):
        den = math.lcm(*[int(c.q) for c in terms.values()])
        return sympy.expand(x * den), sympy.Integer(den)
    return sympy.fraction(sympy.together(x))


def to_z3(e, env, memo: dict | None = None):
    """A sympy integer formula (+, ·, powers, floor, ceiling, Mod, Piecewise, Min, Max, relations
    and connectives) as a Z3 term; NoZ3 for anything else. `memo`: the terms already translated
    with this env (a case split repeats its conditions)."""
    e = sympy.sympify(e)
    memo = {} if memo is None else memo
    if e not in memo:
        memo[e] = _to_z3(e, env, memo)
    return memo[e]


def _to_z3(e, env, memo):
    if e is sympy.true:
        return z3.BoolVal(True)
    if e is sympy.false:
        return z3.BoolVal(False)
    if e.is_Integer:
        return z3.IntVal(int(e))
    if e.is_Symbol:
        if e not in env:
            raise NoZ3(str(e))
        return env[e]
    if isinstance(e, sympy.Add):
        out = to_z3(e.args[0], env, memo)
        for a in e.args[1:]:
            out = out + to_z3(a, env, memo)
        return out
    if isinstance(e, sympy.Mul):
        num, den = sympy.fraction(e)
        if den != 1:
            raise NoZ3(str(e))
        out = to_z3(e.args[0], env, memo)
        for a in e.args[1:]:
            out = out * to_z3(a, env, memo)
        return out
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and e.exp > 0:
        base = to_z3(e.base, env, memo)
        out = base
        for _ in range(int(e.exp) - 1):
            out = out * base
        return out
    if isinstance(e, (sympy.floor, sympy.ceiling)):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        if not (den.is_Integer and den > 0) and not (den.free_symbols <= set(SYMPY_PARAMETERS) and den.is_positive):
            raise NoZ3(str(e))
        if isinstance(e, sympy.floor):
            return to_z3(num, env, memo) / to_z3(den, env, memo)
        return -((-to_z3(num, env, memo)) / to_z3(den, env, memo))
    if isinstance(e, sympy.Mod):
        if not (e.args[1].is_positive):
            raise NoZ3(str(e))
        return to_z3(e.args[0], env, memo) % to_z3(e.args[1], env, memo)
    if isinstance(e, sympy.Piecewise):
        out = None
        for expr, cond in reversed(e.args):
            val = to_z3(expr, env, memo)
            out = val if out is None or cond is sympy.true else z3.If(to_z3(cond, env, memo), val, out)
        return out
    if isinstance(e, (sympy.Min, sympy.Max)):
        out = to_z3(e.args[0], env, memo)
        for a in e.args[1:]:
            x = to_z3(a, env, memo)
            out = z3.If(x < out, x, out) if isinstance(e, sympy.Min) else z3.If(x > out, x, out)
        return out
    rel = {sympy.LessThan: lambda a, b: a <= b, sympy.StrictLessThan: lambda a, b: a < b,
           sympy.GreaterThan: lambda a, b: a >= b, sympy.StrictGreaterThan: lambda a, b: a > b,
           sympy.Equality: lambda a, b: a == b, sympy.Unequality: lambda a, b: a != b}
    for cls, fn in rel.items():
        if isinstance(e, cls):      # compared as num/den with 0, den > 0 (sympy writes 2h = n as h = n/2)
            num, den = _over_denominator(e.lhs - e.rhs)
            if not (den.is_positive and den.free_symbols <= set(SYMPY_PARAMETERS)):
                raise NoZ3(str(e))
            return fn(to_z3(sympy.expand(num), env, memo), z3.IntVal(0))
    if isinstance(e, sympy.ITE):
        return z3.If(*[to_z3(a, env, memo) for a in e.args])
    if isinstance(e, sympy.And):
        return z3.And(*[to_z3(a, env, memo) for a in e.args])
    if isinstance(e, sympy.Or):
        return z3.Or(*[to_z3(a, env, memo) for a in e.args])
    if isinstance(e, sympy.Not):
        return z3.Not(to_z3(e.args[0], env, memo))
    raise NoZ3(str(e))
