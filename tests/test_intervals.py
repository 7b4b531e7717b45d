"""Interval reasoning for side conditions agrees with Z3 wherever it answers."""

import random

import z3

from ringproof.proofs.ring.intervals import Intervals

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
    decide = Intervals().decide
    rng = random.Random(13)
    answered = {True: 0, False: 0}
    for _ in range(300):
        fact, assumptions = _instance(rng)
        got = decide(fact, assumptions)
        if got is not None:
            assert got == _z3_proves(fact, assumptions), (fact, assumptions)
            answered[got] += 1
    assert answered[True] >= 20 and answered[False] >= 20, answered


def _branchy_instance(rng):
    """As the normalization makes them with carries: If-terms in the fact, and assumptions that
    are not bounds (two digit variables coupled, an If in an assumption) beside the box."""
    fact, assumptions = _instance(rng)
    x = z3.Int("v0.r")
    y = z3.Int("w.r")
    unit = rng.choice([M, K])
    carry = z3.If(x + rng.randint(-1, 1) >= unit, 1, rng.choice([0, -1]))
    a = x - carry * rng.choice([1, 2]) + rng.randint(-2, 2) * M
    b = _form(rng, [], params=True) + rng.choice([0, 1]) * z3.If(y <= x, y, x)
    fact = rng.choice([a <= b, a < b, a >= b, a > b, a == b, z3.And(a <= b, b < a + 3 * M), fact])
    assumptions += [0 <= y, y < rng.choice([M, 2 * M, K])]
    if rng.random() < 0.5:
        assumptions.append(rng.choice([x <= y, y <= x + 1, z3.If(x < y, x, y) >= 0]))
    return fact, assumptions


def test_if_branches_and_non_bounds_are_proved_but_never_refuted():
    """The weaker reading (If-branches with their conditions, non-bounds dropped) agrees with Z3
    wherever it answers, and only ever answers True."""
    decide = Intervals().decide
    rng = random.Random(29)
    proved = 0
    for _ in range(400):
        fact, assumptions = _branchy_instance(rng)
        got = decide(fact, assumptions)
        if got is not None:
            assert got == _z3_proves(fact, assumptions), (fact, assumptions)
            proved += got
    assert proved >= 40, proved


def test_intervals_read_if_terms_by_branch_and_drop_non_bounds():
    decide = Intervals().decide
    x, y = z3.Ints("x.r y.r")
    box = [M >= 1, K >= 1, 0 <= x, x < M]
    assert decide(z3.If(x < 0, 1, 0) >= 0, box) is True              # both branches ≥ 0
    assert decide(z3.If(x < 0, 1, 0) >= 1, box) is None              # only a proof, never False
    carry = x + 1 - z3.If(x + 1 >= M, M, 0)                          # a canonical digit again
    assert decide(z3.And(0 <= carry, carry < M), box) is True        # needs each branch's condition
    assert decide(x >= 0, box + [x <= y, 0 <= y]) is True           # x ≤ y is left out
    assert decide(x >= 1, box + [x <= y, 0 <= y]) is None
    assert decide(x + 1 <= M, box) is True
    assert decide(x + 1 < M, box) is False          # m = 1, x = 0


def test_side_conditions_agree_with_z3_whichever_rule_settles_them():
    """Ctx.prove: intervals, a point already known to satisfy the assumptions, or Z3 — each answer
    is Z3's answer on the same assumptions, and each rule answers some."""
    from ringproof.proofs.ring import normalize
    rng = random.Random(41)
    ctx = normalize.Ctx()
    xs = [z3.Int(f"sc{i}.r") for i in range(3)]
    for x in xs:
        ctx.assumptions += [0 <= x, x < ctx.m]
    ctx.assumptions += [xs[0] <= xs[1] + xs[2]]
    rules = {"intervals": 0, "known point": 0, "z3": 0}
    decide, known = ctx.session.intervals.decide, normalize._refuted_at_known_point

    def traced(name, fn, settles):
        def wrapper(*args):
            out = fn(*args)
            if settles(out):
                rules[name] += 1
            return out
        return wrapper

    ctx.session.intervals.decide = traced("intervals", decide, lambda v: v is not None)
    normalize._refuted_at_known_point = traced("known point", known, bool)
    ctx._z3_proves = traced("z3", ctx._z3_proves, lambda v: v is not None)
    try:
        for _ in range(150):
            e = sum(rng.randint(-2, 2) * x for x in xs) + rng.randint(-2, 2) * ctx.m + rng.randint(-3, 3)
            e = e + rng.choice([0, 1]) * z3.If(xs[0] < xs[1], 1, 0)
            fact = rng.choice([e >= 0, e < ctx.m, e == 0, z3.And(e >= -ctx.m, e < 2 * ctx.m)])
            got = ctx.prove(fact)
            assert got == _z3_proves(fact, ctx.assumptions), fact
    finally:
        del ctx.session.intervals.decide
        normalize._refuted_at_known_point = known
    assert all(rules.values()), rules
