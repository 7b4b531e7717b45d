"""The sign oracle: is a form ≤ 0 at every point asked about? Each tier answers only where the
answer is certain, the cheaper first, Z3 last:

1. *coefficients* (`sign`, `sign_of_terms`): a polynomial of the sizes k, m, kd is ≤ 0 for every
   size ≥ 1 where its coefficients in each size less 1 are ≤ 0 (≥ 1 everywhere where the constant
   is ≥ 1 and the rest ≥ 0);
2. *range ends*: the same from the least value a condition leaves each size (`least_of`, `nonpos`,
   `decided` for a comparison), and for a form of indices, each index replaced by an end of its
   range (`bounded`, innermost first);
3. *sample points*: a point that meets every fact and breaks the claim (`points`, `refuted`,
   `somewhere`, `differ`) is a model of the query Z3 would be given: "not shown", without Z3;
4. *Z3*: the decider's (`nests.Decider.holds` and `never`, which try tiers 1-3 first;
   `Oracle.nonpos` for the peak's cases, answers kept).

Expressions are evaluated exactly (`compiled`: Python ints and Fractions, floor and mod as Z3 reads
them with a positive divisor), which `spread.collapse` uses too.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import sympy

from ringproof.proofs.figures.comparisons import atom
from ringproof.proofs.memos import pure

K, M, KD = sympy.symbols("k m kd", positive=True, integer=True)
SIZES = (K, M, KD)

SMALL = ((1, 1, 1), (2, 2, 2), (1, 2, 1), (2, 1, 2), (3, 2, 1), (1, 3, 2), (2, 3, 3), (4, 2, 2), (3, 4, 2))   # k, m, kd
MAX_POINTS = 128


class _Unsupported(Exception):
    pass


_RELATIONS = {sympy.LessThan: "<=", sympy.StrictLessThan: "<", sympy.GreaterThan: ">=",
              sympy.StrictGreaterThan: ">", sympy.Equality: "==", sympy.Unequality: "!="}


def _source(e, names: dict) -> str:
    """Python source evaluating e exactly from the arguments `names` ({symbol: argument})."""
    if e is sympy.true or e is True:
        return "True"
    if e is sympy.false or e is False:
        return "False"
    if e.is_Integer:
        return f"({int(e)})"
    if e.is_Rational:
        return f"F({int(e.p)}, {int(e.q)})"
    if e.is_Symbol:
        if e not in names:
            raise _Unsupported(str(e))
        return names[e]
    parts = lambda sep: "(" + sep.join(_source(a, names) for a in e.args) + ")"   # noqa: E731
    if isinstance(e, sympy.Add):
        return parts(" + ")
    if isinstance(e, sympy.Mul):
        return parts(" * ")
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and e.exp >= 0:
        return f"({_source(e.base, names)} ** {int(e.exp)})"
    if isinstance(e, sympy.floor):
        return f"floor({_source(e.args[0], names)})"
    if isinstance(e, sympy.ceiling):
        return f"ceil({_source(e.args[0], names)})"
    if isinstance(e, sympy.Mod):
        return f"mod({_source(e.args[0], names)}, {_source(e.args[1], names)})"
    for cls, op in _RELATIONS.items():
        if isinstance(e, cls):
            return f"({_source(e.lhs, names)} {op} {_source(e.rhs, names)})"
    if isinstance(e, sympy.And):
        return parts(" and ")
    if isinstance(e, sympy.Or):
        return parts(" or ")
    if isinstance(e, sympy.Not):
        return f"(not {_source(e.args[0], names)})"
    if isinstance(e, (sympy.Min, sympy.Max)):
        return ("min" if isinstance(e, sympy.Min) else "max") + parts(", ")
    if isinstance(e, sympy.Piecewise):         # no case that holds: None (as sympy's lambdify has it)
        out = "None"
        for value, cond in reversed(e.args):
            out = f"({_source(value, names)} if {_source(cond, names)} else {out})"
        return out
    raise _Unsupported(type(e).__name__)


def _mod(a, b):
    if not b > 0:
        raise ZeroDivisionError("a modulus that is not positive")
    return a % b


@pure(8192)
def compiled(e, names: tuple):
    """e (an expression or a condition of the symbols `names`) as a Python function of their
    values, or None where it has a node not evaluated here."""
    try:
        src = _source(e, {x: f"a{i}" for i, x in enumerate(names)})
    except _Unsupported:
        return None
    args = ", ".join(f"a{i}" for i in range(len(names)))
    return eval(f"lambda {args}: {src}", {"F": Fraction, "floor": math.floor, "ceil": math.ceil, "mod": _mod})


def at(fn, point):
    """fn at the point, or None where it is not defined there."""
    try:
        return fn(*point)
    except (ArithmeticError, TypeError, ValueError):
        return None


def points(sizes_of: tuple, ctx: tuple, requires, d_is_n: bool) -> list[tuple]:
    """Points (k, m, kd, then each index of `ctx` = ((v, lo, hi), ...), outer first) of the small
    `SMALL` that satisfy the side condition `requires` (None: none), each index at the ends and the
    middle of its range; [] where a bound or the side condition is not evaluated here."""
    out = []
    names = list(sizes_of)
    check = compiled(requires, tuple(names)) if requires is not None else None
    if requires is not None and check is None:
        return []
    bounds = []
    for v, lo, hi in ctx:
        fl, fh = compiled(sympy.sympify(lo), tuple(names)), compiled(sympy.sympify(hi), tuple(names))
        if fl is None or fh is None:
            return []
        bounds.append((fl, fh))
        names.append(v)
    seen = set()
    for k, m, kd in SMALL:
        size = (k, m, k if d_is_n else kd)
        if size in seen or (check is not None and at(check, size) is not True):
            continue
        seen.add(size)
        todo = [size]
        for fl, fh in bounds:
            grown = []
            for p in todo:
                lo, hi = at(fl, p), at(fh, p)
                if lo is None or hi is None:
                    continue
                lo, hi = math.ceil(lo), math.floor(hi)
                grown += [p + (x,) for x in sorted({lo, hi, (lo + hi) // 2}) if lo <= x <= hi]
            todo = grown
        out += todo
        if len(out) >= MAX_POINTS:
            break
    return out[:MAX_POINTS]


def refuted(fn, facts: list, pts: list, strict_above: bool) -> bool:
    """Does some point satisfy every fact (f ≤ 0) and make fn > 0 (`strict_above`) or fn true?"""
    for p in pts:
        v = at(fn, p)
        if v is None or not (v > 0 if strict_above else v is True):
            continue
        if all((w := at(f, p)) is not None and w <= 0 for f in facts):
            return True
    return False


MAX_LEAVES = 16          # combinations of bounds tried by `bounded`


def bounded(e, ctx: tuple, facts: tuple) -> bool:
    """Is e ≤ 0 at every point of ctx under the facts (f ≤ 0), shown by bounding: each index,
    innermost first, replaced by one of its upper bounds where its coefficient is positive (lower
    where negative) -- its range's, or a fact ±v + r ≤ 0 whose r reads only outer indices -- and the
    result, free of indices, shown ≤ 0 for every k, m, kd ≥ 1 by `sign`. A bound
    only weakens e's maximum, so this never shows what does not hold; False where it shows nothing
    (Z3 is asked then)."""
    names = [v for v, _, _ in ctx]
    outer = {v: set(names[:i]) for i, v in enumerate(names)}
    lows, highs = {v: [_linear(lo)] for v, lo, _ in ctx}, {v: [_linear(hi)] for v, _, hi in ctx}
    for f in facts:
        form = _linear(f)
        if form is None:
            continue
        for v in names:
            c = form.get(v, 0)
            rest = {t: x for t, x in form.items() if t != v}
            if c not in (1, -1) or any(t in names and t not in outer[v] for t in rest) or \
                    any(t not in names and t.free_symbols & set(names) for t in rest):
                continue
            if c == 1:
                highs[v].append({t: -x for t, x in rest.items()})
            else:
                lows[v].append(rest)
    leaves = [0]

    def walk(form: dict, i: int) -> bool:
        if i < 0:
            leaves[0] += 1
            return sign(sympy.Add(*[x * t for t, x in form.items()])) is True
        v = names[i]
        c = form.get(v, 0)
        if c == 0:
            return walk(form, i - 1)
        for b in (highs if c > 0 else lows)[v]:
            if leaves[0] >= MAX_LEAVES:
                return False
            if b is None:
                continue
            out = {t: x for t, x in form.items() if t != v}
            for t, x in b.items():
                out[t] = out.get(t, 0) + c * x
            if walk({t: x for t, x in out.items() if x != 0}, i - 1):
                return True
        return False

    form = _linear(e)
    if form is None or any(t not in names and t.free_symbols & set(names) for t in form):
        return False
    return walk(form, len(names) - 1)


def _linear(e):
    """{term: rational coefficient} of an expanded sum (1 for the constant), or None where a
    coefficient is not rational."""
    terms = sympy.expand(e).as_coefficients_dict()
    if not all(c.is_Rational for c in terms.values()):
        return None
    return {t: c for t, c in terms.items() if c != 0}


# ----------------------------------------------------------------------------- the sizes' signs


@pure(8192)
def sign(e, least=()):
    """True if e ≤ 0 for all k, m, kd ≥ 1 (at least the values `least` gives, (size, value) pairs),
    False if e ≥ 1 for all of them; None otherwise, or where e is not a polynomial of them. Read
    from the coefficients of e in each size less its least value (`sign_of_terms`)."""
    terms = []
    for term, c in sympy.expand(e).as_coefficients_dict().items():
        exps = [0] * len(SIZES)
        for base, x in ([] if term == 1 else term.as_powers_dict().items()):
            if base not in SIZES or not x.is_Integer or x < 0:
                return None                                  # not a polynomial of the sizes
            exps[SIZES.index(base)] = int(x)
        if not c.is_Rational:
            return None
        terms.append((tuple(exps), Fraction(int(c.p), int(c.q))))
    return sign_of_terms(tuple(terms), least)


@pure(8192)
def sign_of_terms(terms: tuple, least=()):
    """`sign` of the polynomial Σ c·k^a·m^b·kd^e given as its terms ((a, b, e), c), c a Fraction:
    each term shifted to the sizes less their least values with the binomial theorem (not sympy's
    expand of the shifted form, which is slow on many calls), the sign read from the coefficients."""
    lows = [dict(least).get(p, 1) for p in SIZES]
    out: dict = {}
    for exps, c in terms:
        for combo in itertools.product(*[[(j, math.comb(x, j) * lo ** (x - j)) for j in range(x + 1)]
                                         for x, lo in zip(exps, lows)]):
            mono = tuple(j for j, _ in combo)
            out[mono] = out.get(mono, 0) + c * math.prod(w for _, w in combo)
    if all(c <= 0 for c in out.values()):
        return True
    if out.get((0,) * len(SIZES), 0) >= 1 and all(c >= 0 for c in out.values()):
        return False
    return None


def least_of(cond) -> dict:
    """{size: the least value the atoms x = v and x ≥ v of the conjunction `cond` leave it}."""
    least = {}
    for a in sympy.And.make_args(cond):
        if isinstance(a, (sympy.Eq, sympy.GreaterThan)) and a.lhs in SIZES and a.rhs.is_Integer:
            least[a.lhs] = max(least.get(a.lhs, 1), int(a.rhs))
    return least


def nonpos(x, cond=None) -> bool:
    """Is x, a polynomial of the sizes (an expression, or its terms as `sign_of_terms` reads them),
    shown ≤ 0 for every size, or (`cond`) from the least sizes `cond` allows (sound for any cond of
    which those atoms are conjuncts)? False where not shown."""
    read = sign_of_terms if isinstance(x, tuple) else sign
    if read(x) is True:
        return True
    least = least_of(cond) if cond is not None else {}
    return any(v > 1 for v in least.values()) and read(x, tuple(sorted(least.items(), key=str))) is True


def decided(a, cond=None):
    """sympy.true or sympy.false where the comparison a (≤, <, ≥ or > of the sizes) holds wherever
    `cond` does or nowhere there, shown by `nonpos` (p ≤ 0 holds where p ≤ 0 is shown, fails where
    1 − p ≤ 0 is), else None."""
    t = atom(a)
    if t is None or t.kind not in ("le", "lt"):
        return None
    for q, answer in ((t.q, sympy.true), (1 - t.q, sympy.false)):      # a: q ≤ 0 (integers)
        if nonpos(q, cond):
            return answer
    return None


SPREAD = (0, 1, 2, 4, 8, 16)     # past the least value of each size, where `somewhere` looks


def somewhere(cond, requires, d_is_n: bool) -> bool:
    """Does `cond`, of the sizes alone, hold at a point near the least sizes it allows (`SPREAD`
    past each) that meets the side condition `requires` (None: none)? False where not found."""
    if not cond.free_symbols <= set(SIZES):
        return False
    fn = compiled(cond, SIZES)
    req = compiled(requires, SIZES) if requires is not None else None
    if fn is None or (requires is not None and req is None):
        return False
    least = least_of(cond)
    k, m, kd = ([least.get(x, 1) + s for s in SPREAD] for x in SIZES)
    for p in itertools.product(k, m, k if d_is_n else kd):
        if d_is_n and p[2] != p[0]:
            continue
        if at(fn, p) is True and (req is None or at(req, p) is True):
            return True
    return False


SPOTS = (1, 2, 3, 5, 8, 20, 64)    # the values of each size `differ` puts in where not fixed


def differ(v, w, fixed: dict) -> bool:
    """Do v and w (forms of the sizes) differ at a point of positive sizes with the `fixed` ones put
    in? Then they are not one form there."""
    f, g = compiled(v, SIZES), compiled(w, SIZES)
    if f is None or g is None:
        return False
    for p in itertools.product(*[[int(fixed[x])] if x in fixed else SPOTS for x in SIZES]):
        a, b = at(f, p), at(g, p)
        if a is not None and b is not None and a != b:
            return True
    return False


class Oracle:
    """The tiers with Z3 last, for the peak's cases: is x, a form of the sizes (and of the indices
    of `ctx`, over their ranges), ≤ 0 wherever `cond` holds? Coefficients and the least sizes of
    `cond` (`nonpos`; not where x reads an index), then the decider's `never` (sample points, Z3
    within `rlimit`). Answers kept in `known` (shared by the cases of every cell)."""

    def __init__(self, decider, known: dict):
        self.decider, self.known = decider, known

    def nonpos(self, x, cond, ctx=(), rlimit: int | None = None) -> bool:
        x = sympy.expand(x)
        if x.is_Number:
            return bool(x <= 0)
        if x not in self.known:                      # for every size
            self.known[x] = sign(x) is True
        ctx = tuple(ctx) if any(x.has(r[0]) for r in ctx) else ()
        key = (x, cond) + ((ctx,) if ctx else ())
        if not self.known[x] and key not in self.known:
            self.known[key] = (not ctx and nonpos(x, cond)) or \
                self.decider.never(sympy.And(cond, sympy.Gt(x, 0, evaluate=False)), ctx, rlimit=rlimit)
        return self.known[x] or self.known[key]

    def terms_nonpos(self, terms: tuple, expr, cond) -> bool:
        """`nonpos` of a polynomial of the sizes given also as its terms (read from them first)."""
        key = ("terms", terms, cond)
        if key not in self.known:
            self.known[key] = nonpos(terms, cond) or self.nonpos(expr, cond)
        return self.known[key]
