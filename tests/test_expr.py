"""Conformance table: every backend evaluates the same formulas to the same values."""

import numpy as np
import pytest
import sympy
import z3
from hypothesis import given, settings, strategies as st

from helpers.backend_z3 import Z3
from ringproof.proofs.ring.normalize import Ctx, DVal
from ringproof.schedules.expr import and_, div, eq, extra_backend, ite, le, lt, mod, ne, var, wrap

FORMULAS = {
    "mod of negative": lambda a, b: mod(a - b, 5),
    "div of negative": lambda a, b: div(a - b - 7, 3),
    "wrap": lambda a, b: wrap(a - b, 4),
    "ite": lambda a, b: ite(lt(a, b), a * 2, b - 1),
    "nested": lambda a, b: mod(mod(a - b, 3) + (b - 1) * 3 - 1, 12) + 1,
    "logic": lambda a, b: ite(and_(le(a, b), ne(a, 3)), 1, 0),
    "eq": lambda a, b: ite(eq(mod(a, 2), mod(b, 2)), a, b),
}
PAIRS = [(a, b) for a in range(-6, 7) for b in range(-6, 7)]


def _int(f, a, b):
    return int(f(a, b))


@pytest.mark.parametrize("name", FORMULAS)
def test_numpy_agrees_with_int(name):
    f = FORMULAS[name]
    a = np.array([p[0] for p in PAIRS])
    b = np.array([p[1] for p in PAIRS])
    got = np.asarray(f(a, b))
    assert got.tolist() == [_int(f, x, y) for x, y in PAIRS]


@pytest.mark.parametrize("name", FORMULAS)
def test_sympy_agrees_with_int(name):
    f = FORMULAS[name]
    x, y = sympy.symbols("x y", integer=True)
    expr = f(x, y)
    for a, b in PAIRS[::7]:
        assert int(expr.subs({x: a, y: b})) == _int(f, a, b)


@pytest.mark.parametrize("name", FORMULAS)
def test_z3_agrees_with_int(name):
    f = FORMULAS[name]
    x, y = z3.Ints("x y")
    with extra_backend(Z3):
        expr = f(x, y)
    for a, b in PAIRS[::5]:
        v = z3.simplify(z3.substitute(expr, (x, z3.IntVal(a)), (y, z3.IntVal(b))))
        assert v.as_long() == _int(f, a, b)


def test_python_and_z3_differ_for_negative_divisor_so_helpers_require_positive():
    # the reason every helper documents b > 0: Z3's mod is Euclidean, Python's is floored
    assert (-7) % -3 == -1
    assert z3.simplify(z3.IntVal(-7) % z3.IntVal(-3)).as_long() == 2


def test_term_has_no_truth_value():
    with pytest.raises(TypeError):
        bool(var("x") + 1)


@settings(deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 100), st.integers(0, 100))
def test_normalized_term_agrees_with_int(m, k, u, w):
    """Digit-normal form of paper-style index formulas equals concrete evaluation."""
    n = k * m
    j, l = u % n + 1, w % m + 1
    i = u % k + 1
    env_t = {"j": var("j"), "l": var("l"), "i": var("i")}
    terms = [
        lambda j, l, i, n, m: mod(mod(l - j, m) + (i - 1) * m - 1, n) + 1,
        lambda j, l, i, n, m: mod(l + div(j - 1, m) * m + (i - 1) * m - 1, n) + 1,
        lambda j, l, i, n, m: div(j - 1 + (i - 1) * m, n),
        lambda j, l, i, n, m: ite(lt(mod(j, m), l), j - l, mod(l - j - 1, m)),
    ]
    ctx = Ctx()
    jq, jr, lr, iv = z3.Ints("jq jr lr iv")
    ctx.assumptions += [0 <= jq, jq < ctx.k, 0 <= jr, jr < ctx.m, 0 <= lr, lr < ctx.m,
                        1 <= iv, iv <= ctx.k]
    ctx.env.update(j=DVal(jq, jr + 1), l=DVal(z3.IntVal(0), lr + 1), i=DVal(z3.IntVal(0), iv))
    sub = [(ctx.m, z3.IntVal(m)), (ctx.k, z3.IntVal(k)), (jq, z3.IntVal((j - 1) // m)),
           (jr, z3.IntVal((j - 1) % m)), (lr, z3.IntVal(l - 1)), (iv, z3.IntVal(i))]
    for f in terms:
        d = ctx.val(f(env_t["j"], env_t["l"], env_t["i"], var("n"), var("m")))
        got = z3.simplify(z3.substitute(d.q * ctx.m + d.r, *sub)).as_long()
        assert got == f(j, l, i, n, m)


def test_a_sympy_choice_between_two_conditions_is_a_condition():
    x, y = sympy.symbols("x y", integer=True)
    got = ite(eq(x, 1), lt(x, y), eq(y, 2))
    assert sympy.And(got, y > 0).subs({x: 1, y: 3}) is sympy.true
    assert sympy.And(got, y > 0).subs({x: 0, y: 3}) is sympy.false
    assert isinstance(ite(eq(x, 1), x, y), sympy.Piecewise)         # a choice of values stays one
