"""sympy's And of comparisons, the very object `sympy.And` builds, with what it derives of each
comparison kept: building an And, sympy brings every comparison to its canonical form (twice, the
second for its negation) to find duplicates and contradictions, and sorts them twice (`ordered`,
each comparison's node count and sort key found again), at every construction. The counter
(`nests._case`) and the peak's bound (`peak_bound._fixed_piece`) build tens of thousands of Ands of
the same few hundred comparisons. Here those are kept per comparison. Where a Boolean is not a
comparison, sympy builds the And as before.

`conjunction` is checked against `sympy.And` on import (`_agrees`): a sympy whose And is built
otherwise gets `sympy.And` itself (`tests/test_conjunction.py` compares the two on random
conjunctions)."""

from __future__ import annotations

import sympy
from sympy.core.operations import AssocOp
from sympy.core.relational import Relational

from ringproof.proofs.memos import pure

try:
    from sympy.core.sorting import _nodes, default_sort_key
except ImportError:          # a sympy without them: its And itself (`conjunction`)
    _nodes = default_sort_key = None


@pure(65536)
def _canonical(a):
    return a.canonical


@pure(65536)
def _negated(c):
    return c.negated.canonical


@pure(65536)
def _order(a) -> tuple:
    """The key sympy's `ordered` sorts a Boolean by (its node count, then its sort key; ties kept
    in the order met), kept."""
    return _nodes(a), default_sort_key(a)


def _sorted(args) -> list:
    return sorted(args, key=_order)


def _built(args) -> sympy.Basic:
    """sympy.And(*args) where args are Booleans: sympy's object, built as its And builds it (true
    left out, an And's arguments taken in, the comparisons in sympy's order, one kept of those of one
    canonical form, false where one's negation is there) with what it derives of each comparison
    read from the caches; built by sympy itself where a Boolean is not a comparison."""
    flat = []
    for a in args:
        if a is sympy.false:
            return sympy.false
        if a is sympy.true:
            continue
        for x in a.args if isinstance(a, sympy.And) else (a,):
            if not isinstance(x, Relational):
                return sympy.And(*args)
            flat.append(x)
    kept, seen = [], set()
    for x in _sorted(flat):
        c = _canonical(x)
        if c in seen:
            continue
        if _negated(c) in seen:
            return sympy.false
        seen.add(c)
        kept.append(x)
    argset = frozenset(kept)
    if not argset:
        return sympy.true
    if len(argset) == 1:
        return kept[0]
    obj = super(AssocOp, sympy.And).__new__(sympy.And, *_sorted(argset))     # as LatticeOp.__new__ does
    obj._argset = argset
    return obj


def _agrees() -> bool:
    """Does `_built` give sympy.And's object on a few conjunctions (structure, order, hash, text)?"""
    k, m, i = sympy.symbols("k m i", integer=True)
    samples = [(i <= k, m >= 2, i - k <= -1), (k <= 3, sympy.true, i >= m), (i <= k,), (m >= 2, sympy.And(i <= 2, k >= 1)),
               (i <= k, k >= i, m <= 3), (i <= k, i > k), (2 * i - k <= 0, m - i >= 1, i - m <= -1)]
    for args in samples:
        a, b = _built(args), sympy.And(*args)
        if a != b or a.args != b.args or hash(a) != hash(b) or str(a) != str(b) or type(a) is not type(b):
            return False
    return True


conjunction = _built if _nodes is not None and _agrees() else (lambda args: sympy.And(*args))


@pure(65536)
def _put(a, values: tuple):
    return a.xreplace(dict(values))


def put_in(c, values: tuple):
    """The condition c with `values` ((symbol, value), ...) put in: c.xreplace's result, each
    comparison's kept, an And rebuilt by `conjunction`."""
    if isinstance(c, Relational):
        return _put(c, values)
    if isinstance(c, (sympy.And, sympy.Or, sympy.Not)):
        args = [put_in(a, values) for a in c.args]
        if all(a is b for a, b in zip(args, c.args)):
            return c
        return conjunction(args) if isinstance(c, sympy.And) else c.func(*args)
    return c.xreplace(dict(values))
