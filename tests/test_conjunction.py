"""`conjunction` builds sympy.And's very object (structure, order of arguments, hash, text), and
`put_in` gives c.xreplace's condition, on random conjunctions of comparisons: duplicates in
canonical form, contradictions, true, false and nested Ands among them."""

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


def test_a_conjunction_is_sympys_and():
    rng = random.Random(0)
    for _ in range(300):
        args = [_comparison(rng) for _ in range(rng.randint(0, 6))]
        if args and isinstance(args[0], sympy.core.relational.Relational) and rng.random() < 0.3:
            args.append(args[0].reversed)                  # the same comparison, written the other way
        if args and rng.random() < 0.2:
            args.append(sympy.Not(args[-1]))               # a contradiction
        if rng.random() < 0.1:
            args.append(rng.choice([sympy.true, sympy.false]))
        if len(args) > 2 and rng.random() < 0.2:
            args = [sympy.And(*args[:2])] + args[2:]       # a nested And
        if len(args) > 3 and rng.random() < 0.1:
            args = [sympy.And(args[0], sympy.Or(*args[1:3]))] + args[3:]     # holding an Or: sympy's own
        rng.shuffle(args)
        assert _same(cj.conjunction(args), sympy.And(*args)), args


def test_the_check_on_import_chose_the_kept_construction():
    assert cj._agrees() and cj.conjunction is cj._built


def test_a_condition_with_values_put_in_is_xreplaces():
    rng = random.Random(1)
    for _ in range(200):
        atoms = [_comparison(rng) for _ in range(rng.randint(1, 5))]
        c = sympy.And(*atoms[:3], sympy.Or(*atoms[2:]), sympy.Not(atoms[0]) if rng.random() < 0.3 else sympy.true)
        values = tuple((x, sympy.Integer(rng.randint(1, 4))) for x in rng.sample([K, M, I, J], rng.randint(0, 3)))
        assert _same(cj.put_in(c, values), c.xreplace(dict(values))), (c, values)
