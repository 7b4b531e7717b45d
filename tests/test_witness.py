"""The counter's shortcuts before Z3 (`witness`) agree with Z3 wherever they answer: a refuting
point is a model of Z3's query (never unsat), a bound-by-bound proof is unsat, and exact evaluation
equals sympy's."""

import random

import sympy

from ringproof.proofs.figures import signs
from ringproof.proofs.figures.nests import KD, M, K, Decider
from ringproof.schedules.shape import ANY_D, D_IS_N

I, J, L = sympy.symbols("i j l", integer=True)


def _linear(rng, names, params=True):
    e = sympy.Integer(rng.randint(-3, 3))
    for v in names:
        e += rng.randint(-2, 2) * v
    if params:
        e += rng.randint(-2, 2) * K + rng.randint(-1, 1) * M + rng.randint(-1, 1) * K * M
    return sympy.expand(e)


def _instance(rng):
    """A nest as the counter asks about it (l, i, j: bounds of the sizes and outer indices), a
    claim e ≤ 0 and a few further atoms f ≤ 0."""
    ctx = [(L, sympy.Integer(1), M)]
    if rng.random() < 0.8:
        ctx.append((I, sympy.Integer(rng.randint(0, 1)), rng.choice([K, 2 * K, K * M, L + K])))
    if rng.random() < 0.5:
        ctx.append((J, sympy.Integer(1), rng.choice([K, M] + [I + 1] * (len(ctx) > 1))))
    names = [v for v, _, _ in ctx]
    facts = tuple(_linear(rng, rng.sample(names, 2 if len(names) > 1 else 1), rng.random() < 0.5)
                  for _ in range(rng.randint(0, 2)))
    e = _linear(rng, rng.sample(names, rng.randint(1, len(names))))
    if rng.random() < 0.2:
        e += sympy.floor(K / 2) - sympy.Mod(L, 2)
    return e, tuple(ctx), facts


def test_refuting_points_and_bounds_agree_with_z3_on_random_instances():
    rng = random.Random(7)
    answered = {"refuted": 0, "bounded": 0}
    for shape in (D_IS_N, ANY_D):
        d = Decider(shape)
        for _ in range(100):
            e, ctx, facts = _instance(rng)
            z = d._z3(e, ctx, facts)
            assert z is not None, (e, ctx, facts)
            if d._refuted(e, ctx, facts):
                assert z is False, (e, ctx, facts)
                answered["refuted"] += 1
            if signs.bounded(e, ctx, facts):
                assert z is True, (e, ctx, facts)
                answered["bounded"] += 1
            cond = sympy.And(e > 0, *[f <= 0 for f in facts])
            if d._refuted(cond, ctx, (), condition=True):      # never(cond)'s shortcut: cond is satisfiable
                assert z is False, (e, ctx, facts)
    assert answered["refuted"] >= 50 and answered["bounded"] >= 30, answered


def test_the_decider_answers_as_z3_alone_would():
    rng = random.Random(11)
    d = Decider(ANY_D)
    for _ in range(80):
        e, ctx, facts = _instance(rng)
        if not e.free_symbols - {K, M, KD}:
            continue                     # asked of the sizes alone (the indices' ranges dropped)
        assert d.holds(e, ctx, facts) is (d._z3(sympy.expand(e), ctx, facts) is True), (e, ctx, facts)


def test_exact_evaluation_equals_sympy():
    rng = random.Random(3)
    names = (K, M, KD, L)
    forms = [sympy.floor((K * M + L) / 3) - sympy.ceiling(KD / 2) + sympy.Mod(L + 2 * K, M),
             sympy.Piecewise((K * L, L < M), (sympy.Rational(1, 2) * KD, True)),
             sympy.Max(K, L) - sympy.Min(M, 2 * KD) + L ** 2]
    for form in forms:
        fn = signs.compiled(form, names)
        assert fn is not None
        for _ in range(40):
            point = [rng.randint(1, 6) for _ in names]
            assert fn(*point) == form.xreplace(dict(zip(names, map(sympy.Integer, point)))), (form, point)
    assert signs.compiled(sympy.exp(K), names) is None          # a node it does not evaluate
