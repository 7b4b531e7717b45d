"""Floors, ceilings and Mods of a closed form made exact where a case's substitution decides them:
the help gaps.py gives Z3, each step checked.

⌊p⌋ of a polynomial p with rational coefficients is p when p takes integer values at the integer
points of {0, …, d}^k (d its total degree, k its symbols): then its coefficients in the binomial
basis, finite differences at those points, are integers, so p is an integer at every integer point
(Pólya's theorem on integer-valued polynomials). Otherwise ⌊a/b⌋, for polynomials a and b in the
case's integer symbols, becomes q when the division algorithm over the integers writes a = b·q + r
(q with integer coefficients, checked by expansion) and `in_range(r, b)` proves 0 ≤ r < b under the
case's ranges (a query of its own). ⌈x⌉ is −⌊−x⌋ and Mod(a, b) is a − b·⌊a/b⌋. A floor not made
exact stays as it is (to_z3 ties it to its argument).
Rebuilding the form (a comparison as lhs − rhs against 0) lets sympy fold the Piecewise conditions
that have become decided.
"""

from __future__ import annotations

import itertools

import sympy as sp


def exact(e: sp.Expr, in_range) -> sp.Expr:
    """`e` with every floor, ceiling and Mod that the division algorithm and `in_range` decide
    replaced by its polynomial value, innermost first (each distinct subterm once)."""
    done: dict = {}

    def walk(x):
        if x not in done:
            done[x] = _rewrite(x, [walk(a) for a in x.args], in_range) if x.args else x
        return done[x]
    return walk(e)


def _rewrite(x, args, in_range):
    if isinstance(x, sp.floor):
        return floor_of(args[0], in_range)
    if isinstance(x, sp.ceiling):
        return -floor_of(-args[0], in_range)
    if isinstance(x, sp.Mod):
        a, b = args
        return a - b * floor_of(a / b, in_range)
    if isinstance(x, sp.Rel):        # as lhs − rhs against 0, so that sympy decides a constant one
        return x.func(sp.expand(args[0] - args[1]), 0)
    return x.func(*args)


def floor_of(x: sp.Expr, in_range) -> sp.Expr:
    """⌊x⌋ as a polynomial if some order of the symbols gives a quotient whose remainder is proved
    in range, else ⌊x⌋ itself."""
    a, b = sp.fraction(sp.cancel(sp.together(x)))
    gens = sorted(x.free_symbols, key=str)
    if not gens or not (a.is_polynomial(*gens) and b.is_polynomial(*gens)):
        return sp.floor(x)
    if b.is_number and integer_valued(a / b, gens):
        return sp.expand(a / b)
    tried = set()
    for order in itertools.permutations(gens):
        q, r = divide(sp.expand(a), sp.expand(b), order)
        if sp.expand(a - b * q - r) != 0:       # the division's own identity, not assumed
            raise AssertionError(f"division of {a} by {b} is wrong")
        if r not in tried and in_range(r, b):
            return q
        tried.add(r)
    return sp.floor(x)


def integer_valued(p: sp.Expr, gens) -> bool:
    """Whether the polynomial p is an integer at every integer point: at each point of {0, …, d}^k."""
    d = sp.Poly(p, *gens).total_degree()
    return all(p.subs(dict(zip(gens, point))).is_integer
               for point in itertools.product(range(d + 1), repeat=len(gens)))


def divide(a: sp.Expr, b: sp.Expr, gens) -> tuple[sp.Expr, sp.Expr]:
    """(q, r) with a = b·q + r, q with integer coefficients: the division algorithm in the
    lexicographic order of `gens`, a leading term that b's leading term does not divide over the
    integers going to r (a and b are first scaled to integer coefficients)."""
    pa, pb = sp.Poly(a, *gens, domain="QQ"), sp.Poly(b, *gens, domain="QQ")
    scale = sp.ilcm(*[c.q for c in pa.coeffs() + pb.coeffs()])
    pa, pb = (pa * scale).set_domain("ZZ"), (pb * scale).set_domain("ZZ")
    lead_m, lead_c = pb.monoms()[0], pb.coeffs()[0]
    q = r = sp.Poly(0, *gens, domain="ZZ")
    p = pa
    while not p.is_zero:
        mono, coeff = p.monoms()[0], p.coeffs()[0]
        step = tuple(x - y for x, y in zip(mono, lead_m))
        if min(step) >= 0 and coeff % lead_c == 0:
            t = sp.Poly.from_dict({step: coeff // lead_c}, *gens, domain="ZZ")
            q, p = q + t, p - t * pb
        else:
            t = sp.Poly.from_dict({mono: coeff}, *gens, domain="ZZ")
            r, p = r + t, p - t
    return q.as_expr(), r.as_expr() / scale
