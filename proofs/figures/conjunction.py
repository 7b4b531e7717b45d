"""A condition with values put in (`put_in`): c.xreplace's result, each comparison's kept. The
peak's bound (`peak_bound._fixed_piece`) puts a cell's sizes into the same few hundred comparisons
of tens of thousands of pieces; sympy builds each And of the results itself."""

from __future__ import annotations

import sympy
from sympy.core.relational import Relational

from ringproof.proofs.memos import pure


@pure(65536)
def _put(a, values: tuple):
    return a.xreplace(dict(values))


def put_in(c, values: tuple):
    """The condition c with `values` ((symbol, value), ...) put in: c.xreplace's result, each
    comparison's kept, an And, Or or Not rebuilt where an argument changed."""
    if isinstance(c, Relational):
        return _put(c, values)
    if isinstance(c, (sympy.And, sympy.Or, sympy.Not)):
        args = [put_in(a, values) for a in c.args]
        if all(a is b for a, b in zip(args, c.args)):
            return c
        return c.func(*args)
    return c.xreplace(dict(values))
