"""Questions of the counter's `nests.Decider` (is e ≤ 0 at every point of a nest?) settled before
Z3 is asked, both ways only where the answer is certain:

- "not shown" (`Decider._refuted`, with `points`, `refuted`): a point that satisfies every fact of
  the question (k, m, kd ≥ 1, kd = k where d is n, the side condition, the loops' ranges, the
  further atoms) and breaks the claim is a model of the query Z3 would be given, so Z3 could only
  answer sat (or nothing: "not shown" too). The points are a few small sizes, at each the ends and
  middle of every loop's range, outer first.
- "shown" (`bounded`): each index replaced by one of its bounds, innermost first, and the result
  ≤ 0 for every size by its coefficients' signs.

Expressions are evaluated exactly (`compiled`: Python ints and Fractions, floor and mod as Z3 reads
them with a positive divisor), which `spread.collapse` uses too.
"""

from __future__ import annotations

import math
from fractions import Fraction

import sympy

from ringproof.proofs.memos import pure

SIZES = ((1, 1, 1), (2, 2, 2), (1, 2, 1), (2, 1, 2), (3, 2, 1), (1, 3, 2), (2, 3, 3), (4, 2, 2), (3, 4, 2))   # k, m, kd
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


def _at(fn, point):
    """fn at the point, or None where it is not defined there."""
    try:
        return fn(*point)
    except (ArithmeticError, TypeError, ValueError):
        return None


def points(sizes_of: tuple, ctx: tuple, requires, d_is_n: bool) -> list[tuple]:
    """Points (k, m, kd, then each index of `ctx` = ((v, lo, hi), ...), outer first) of the small
    `SIZES` that satisfy the side condition `requires` (None: none), each index at the ends and the
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
    for k, m, kd in SIZES:
        size = (k, m, k if d_is_n else kd)
        if size in seen or (check is not None and _at(check, size) is not True):
            continue
        seen.add(size)
        todo = [size]
        for fl, fh in bounds:
            grown = []
            for p in todo:
                lo, hi = _at(fl, p), _at(fh, p)
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
        v = _at(fn, p)
        if v is None or not (v > 0 if strict_above else v is True):
            continue
        if all((w := _at(f, p)) is not None and w <= 0 for f in facts):
            return True
    return False


MAX_LEAVES = 16          # combinations of bounds tried by `bounded`


def bounded(e, ctx: tuple, facts: tuple, sign) -> bool:
    """Is e ≤ 0 at every point of ctx under the facts (f ≤ 0), shown by bounding: each index,
    innermost first, replaced by one of its upper bounds where its coefficient is positive (lower
    where negative) -- its range's, or a fact ±v + r ≤ 0 whose r reads only outer indices -- and the
    result, free of indices, shown ≤ 0 for every k, m, kd ≥ 1 by `sign` (`nests._sign`). A bound
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
