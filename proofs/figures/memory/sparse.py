"""Polynomials of the sizes (k, m, kd) and of a case's indices as sympy's sparse ring elements (a
dict of exponent tuples to rationals): what `peak_bound.Cases` adds, reads coefficients of and puts
ends of ranges into in every case, much faster than sympy's expressions. A form that is
not such a polynomial (a floor, a Piecewise) is not converted: its caller keeps the expression."""

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


def read(p, ranges):
    """(p, [(position, least, largest)] of the ranges' indices inner first, the indices' positions),
    each an element of the ring of the sizes and the ranges' indices; None where p or an end of a
    range is not a polynomial of them."""
    names = tuple(x for x, _, _ in ranges)
    R = ring_of(names)
    P = poly(R, p)
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
    return Reading(sympy.expand(p), list(reversed(ranges)), comparisons.split, lambda c: c.has(*names),
                   lambda c, r, x: sympy.expand(r + c * x))
