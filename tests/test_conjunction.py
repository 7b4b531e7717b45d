"""`put_in` gives c.xreplace's condition (structure, order of arguments, hash, text) on random
conditions of comparisons, Ands, Ors and Nots."""

import random

import sympy

from ringproof.proofs.figures import conjunction as cj
K, M, I, J = sympy.symbols("k m i j", integer=True)


def _comparison(rng):
    """A random comparison of i, j, k, m: a linear form against a number, written either way round."""
    lhs = sum(rng.choice([-2, -1, 0, 1, 2]) * x for x in (K, M, I, J)) + rng.randint(-3, 3)
    rel = rng.choice([sympy.Le, sympy.Lt, sympy.Ge, sympy.Gt, sympy.Eq, sympy.Ne])
    return rel(lhs, rng.randint(-2, 2)) if rng.random() < 0.7 else rel(rng.randint(-2, 2), lhs)


def _same(a, b) -> bool:
    return a == b and type(a) is type(b) and a.args == b.args and hash(a) == hash(b) and str(a) == str(b)


def test_a_condition_with_values_put_in_is_xreplaces():
    rng = random.Random(1)
    for _ in range(200):
        atoms = [_comparison(rng) for _ in range(rng.randint(1, 5))]
        c = sympy.And(*atoms[:3], sympy.Or(*atoms[2:]), sympy.Not(atoms[0]) if rng.random() < 0.3 else sympy.true)
        values = tuple((x, sympy.Integer(rng.randint(1, 4))) for x in rng.sample([K, M, I, J], rng.randint(0, 3)))
        assert _same(cj.put_in(c, values), c.xreplace(dict(values))), (c, values)
