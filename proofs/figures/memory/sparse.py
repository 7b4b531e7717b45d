"""Polynomials of the sizes (k, m, kd) and of a case's indices as sympy's sparse ring elements (a
dict of exponent tuples to rationals): the values of a case's pieces as `peak_bound.Cases` holds
them (`form`), adds (`total`), puts single values and ends of ranges into (`put`, `reading`) and
reads coefficients of. A value that is not such a polynomial (a floor) stays sympy's expression,
as does what is handed to Z3 or printed (`expr`)."""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, NamedTuple

import sympy
from sympy.polys.domains import QQ
from sympy.polys.polyerrors import CoercionFailed
from sympy.polys.rings import PolyElement, ring

from ringproof.proofs.figures import comparisons
from ringproof.proofs.figures.nests import SYMPY_PARAMETERS
from ringproof.proofs.memos import pure

SIZES = len(SYMPY_PARAMETERS)     # the ring's first generators are the sizes, in SYMPY_PARAMETERS' order


@pure(64)
def ring_of(names: tuple):
    """The ring of polynomials over QQ in the sizes and the index symbols `names`."""
    return ring(list(SYMPY_PARAMETERS) + list(names), QQ)[0]


@pure(65536)
def poly(R, e) -> PolyElement | None:
    """e (a sympy expression) as an element of R, or None where it is not a polynomial of R's
    generators with rational coefficients."""
    try:
        return R.from_expr(sympy.sympify(e))
    except (CoercionFailed, ValueError, TypeError):
        return None


def form(R, e):
    """e as an element of R where it is a polynomial of R's generators, else e: a piece's value as
    a case holds it (`peak_bound.Cases.case`)."""
    got = poly(R, e)
    return e if got is None else got


def expr(f):
    """f as sympy's expression (an element of a ring, or an expression already)."""
    return f.as_expr() if isinstance(f, PolyElement) else f


def put(f, values: dict):
    """f (an element or an expression) with `values` ({symbol: expression}) put in at once, as
    xreplace puts them: in the ring where every value is one of its polynomials."""
    if isinstance(f, PolyElement):
        R = f.ring
        pairs = [(R.gens[R.symbols.index(x)], poly(R, v)) for x, v in values.items() if x in R.symbols]
        if all(q is not None for _, q in pairs):
            return f.compose(pairs) if pairs else f
        f = f.as_expr()
    return f.xreplace(values)


def total(fs: list):
    """The sum of `fs`: an element of their ring where all are of one, else an expression."""
    if fs and all(isinstance(f, PolyElement) and f.ring == fs[0].ring for f in fs):
        return sum(fs[1:], fs[0])
    return sympy.Add(*[expr(f) for f in fs])


def has(f, x) -> bool:
    """Does f (an element, an expression or a number) read the symbol x?"""
    if isinstance(f, PolyElement):
        R = f.ring
        return x in R.symbols and f.degree(R.gens[R.symbols.index(x)]) > 0
    return sympy.sympify(f).has(x)


def read(p, ranges):
    """(p, [(position, least, largest)] of the ranges' indices inner first, the indices' positions),
    each an element of the ring of the sizes and the ranges' indices; None where p or an end of a
    range is not a polynomial of them."""
    names = tuple(x for x, _, _ in ranges)
    R = ring_of(names)
    P = p if isinstance(p, PolyElement) and p.ring == R else poly(R, expr(p))
    ends = [(poly(R, lo), poly(R, hi)) for _, lo, hi in ranges]
    if P is None or any(e is None for pair in ends for e in pair):
        return None
    indices = range(SIZES, SIZES + len(names))
    return P, [(at, lo, hi) for at, (lo, hi) in reversed(list(zip(indices, ends)))], indices


def linear_in(q: PolyElement, at: int):
    """(c, r) with q = c·x + r, x the generator at position `at`, neither c nor r reading x; None
    where q is of degree 2 or more in x."""
    c, r = {}, {}
    for mono, coeff in q.items():
        e = mono[at]
        if e == 0:
            r[mono] = coeff
        elif e == 1:
            c[mono[:at] + (0,) + mono[at + 1:]] = coeff
        else:
            return None
    R = q.ring
    return R.from_dict(c) if c else R.zero, R.from_dict(r) if r else R.zero


def reads(q: PolyElement, positions) -> bool:
    """Does q read a generator at one of `positions`?"""
    return any(mono[i] for mono in q.itermonoms() for i in positions)


def size_terms(q: PolyElement) -> tuple | None:
    """q's terms (exponents of the sizes, a Fraction), as `signs.sign_of_terms` reads them, in a
    fixed order; None where q reads an index."""
    out = []
    for mono, c in q.items():
        if any(mono[SIZES:]):
            return None
        out.append((mono[:SIZES], Fraction(int(c.numerator), int(c.denominator))))
    return tuple(sorted(out))


class Reading(NamedTuple):
    """A form and its indices' ranges read one way: `form`, `ends` [(index, least, largest)] inner
    first, `linear_in(q, index)` (c, r) with q = c·index + r or None, `reads(c)` whether c reads an
    index, `put(c, r, x)` r + c·x."""

    form: object
    ends: list
    linear_in: Callable
    reads: Callable
    put: Callable


def reading(p, ranges, expressions: bool = False) -> Reading:
    """p over `ranges` as sparse polynomials (`read`) where p and the ranges' ends are polynomials
    and not `expressions`, else as sympy's expressions (a floor of the sizes in p or an end)."""
    got = None if expressions else read(p, ranges)
    if got is not None:
        P, ends, indices = got
        return Reading(P, ends, linear_in, lambda c: reads(c, indices), lambda c, r, x: r + c * x)
    names = [v for v, _, _ in ranges]
    return Reading(sympy.expand(expr(p)), list(reversed(ranges)), comparisons.split, lambda c: c.has(*names),
                   lambda c, r, x: sympy.expand(r + c * x))
