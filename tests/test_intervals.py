"""Interval reasoning for side conditions agrees with Z3 wherever it answers."""

import random

import z3

from ringproof.proofs.ring.intervals import decide

M, K = z3.Int("m"), z3.Int("k")


def _form(rng, names, params=True):
    e = z3.IntVal(rng.randint(-3, 3))
    for v in names:
        e = e + rng.randint(-2, 2) * z3.Int(v)
    if params:
        e = e + rng.randint(-2, 2) * M + rng.randint(-2, 2) * K
    return e


def _instance(rng):
    """Box assumptions as the normalization makes them, and a random linear comparison."""
    names = [f"v{i}.r" for i in range(rng.randint(1, 3))]
    assumptions = [M >= 1, K >= 1]
    if rng.random() < 0.3:
        assumptions.append(M == rng.randint(1, 5))
    for v in names:
        x = z3.Int(v)
        unit = rng.choice([M, K, z3.IntVal(rng.randint(1, 4))])
        assumptions += [rng.randint(-2, 1) * unit + rng.randint(-1, 1) <= x,
                        x < rng.randint(1, 3) * unit + rng.randint(-1, 1)]
    a, b = _form(rng, names), _form(rng, names[:1], params=rng.random() < 0.5)
    fact = rng.choice([a <= b, a < b, a >= b, a > b, a == b, z3.And(a <= b, b < a + 3 * M)])
    return fact, assumptions


def _z3_proves(fact, assumptions) -> bool:
    s = z3.Solver()
    s.add(*assumptions)
    s.add(z3.Not(fact))
    r = s.check()
    assert r != z3.unknown
    return r == z3.unsat


def test_intervals_agree_with_z3_on_random_instances():
    rng = random.Random(13)
    answered = {True: 0, False: 0}
    for _ in range(300):
        fact, assumptions = _instance(rng)
        got = decide(fact, assumptions)
        if got is not None:
            assert got == _z3_proves(fact, assumptions), (fact, assumptions)
            answered[got] += 1
    assert answered[True] >= 20 and answered[False] >= 20, answered


def test_intervals_leave_if_terms_and_coupled_assumptions_to_z3():
    x, y = z3.Ints("x.r y.r")
    box = [M >= 1, K >= 1, 0 <= x, x < M]
    assert decide(z3.If(x < 0, 1, 0) >= 0, box) is None
    assert decide(x >= 0, box + [x <= y, 0 <= y]) is None
    assert decide(x + 1 <= M, box) is True
    assert decide(x + 1 < M, box) is False          # m = 1, x = 0
