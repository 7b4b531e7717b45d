"""A comparison of integers read once (`atom`): p with a ⇔ p ≤ 0, p < 0, p = 0 or p ≠ 0, expanded,
and q = p + 1 for <, else p (a: q ≤ 0 where p takes integer values). The sign oracle
(`signs.decided`), the peak's cases (an index's cut, a comparison's extent) and the ranges a
comparison leaves one size (`range_of`, `box`) read this record, built once per comparison; the
sympy comparison stays the key and what is printed."""

from __future__ import annotations

from typing import NamedTuple

import sympy

from ringproof.proofs.memos import pure

# comparison -> (kind, whether p is lhs − rhs, else rhs − lhs)
KINDS = {sympy.Le: ("le", True), sympy.Lt: ("lt", True), sympy.Ge: ("le", False), sympy.Gt: ("lt", False),
         sympy.Eq: ("eq", True), sympy.Ne: ("ne", True)}


class Atom(NamedTuple):
    """A comparison as p (kind "le": p ≤ 0, "lt": p < 0, "eq": p = 0, "ne": p ≠ 0) and q, its
    reading q ≤ 0 over the integers (p + 1 for "lt")."""

    kind: str
    p: sympy.Expr
    q: sympy.Expr
    symbols: frozenset


@pure(65536)
def atom(a) -> Atom | None:
    """The comparison a read as an `Atom`; None where a is not ≤, <, ≥, >, = or ≠."""
    if type(a) not in KINDS:
        return None
    kind, left = KINDS[type(a)]
    p = sympy.expand(a.lhs - a.rhs if left else a.rhs - a.lhs)
    return Atom(kind, p, p + 1 if kind == "lt" else p, frozenset(p.free_symbols))


def split(e, v) -> tuple | None:
    """(c, r) with e = c·v + r, c and r free of v (e expanded); None where e is not linear in v."""
    c = e.coeff(v)
    r = sympy.expand(e - c * v)
    return None if c.has(v) or r.has(v) else (c, r)


@pure(65536)
def unit_in(a, v):
    """(c, r) with the comparison a read as c·v + r ≤ 0 (= 0 for = and ≠; `Atom.q`), c = ±1 and r
    free of v; None where a is not so."""
    t = atom(a)
    if t is None or v not in t.symbols:
        return None
    got = split(t.q, v)
    return got if got is not None and got[0] in (1, -1) else None


@pure(65536)
def range_of(a, sizes: tuple):
    """(size, least, largest or None) that a comparison of one of `sizes` with a number (linear,
    rational coefficients) leaves it, the size an integer ≥ 1; else None."""
    t = atom(a)
    if t is None or t.kind == "ne" or len(t.symbols) != 1:
        return None
    (x,) = t.symbols
    got = split(t.p, x) if x in sizes and t.p.is_polynomial(x) else None
    if got is None or got[0] == 0 or not (got[0].is_Rational and got[1].is_Rational):
        return None
    c, r = got
    lo, hi = 1, None
    for qa, qb in ([(c, r)] if t.kind in ("le", "lt") else [(c, r), (-c, -r)]):     # qa·x + qb ≤ 0 (< 0)
        bound = -qb / qa
        if qa > 0:                                                 # x ≤ bound (< bound)
            top = int(sympy.ceiling(bound) - 1 if t.kind == "lt" else sympy.floor(bound))
            hi = top if hi is None else min(hi, top)
        else:                                                      # x ≥ bound (> bound)
            lo = max(lo, int(sympy.floor(bound) + 1 if t.kind == "lt" else sympy.ceiling(bound)))
    return x, lo, hi


def box(cond, sizes: tuple) -> dict:
    """{size: [least, largest or None]} that the conjuncts of `cond` comparing one size with a number
    (`range_of`) leave each of `sizes` (1 and None where none does): 4 ≤ k, k < 5 leave k = 4."""
    out = {x: [1, None] for x in sizes}
    for a in sympy.And.make_args(cond):
        got = range_of(a, sizes)
        if got is not None:
            x, lo, hi = got
            out[x][0] = max(out[x][0], lo)
            out[x][1] = hi if out[x][1] is None else out[x][1] if hi is None else min(out[x][1], hi)
    return out
