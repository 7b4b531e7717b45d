"""A schedule's Shape is the one place its sizes are written: every enumerator agrees with the side
conditions it states, and every reader of a parameter record gets the same names."""

from __future__ import annotations

from dataclasses import replace

from ringproof.proofs.figures.counting import parameters
from ringproof.proofs.ring.normalize import Ctx
from ringproof.proofs.ring.smt import small_sizes
from ringproof.schedules.algo1 import ALGO1
from ringproof.schedules import shape as shapes
from ringproof.schedules.shape import ANY_D, D_IS_N, PARAMETERS


def test_sizes_satisfy_exactly_the_side_conditions():
    for shape in (D_IS_N, ANY_D):
        got = set(shape.sizes(9))
        want = {(n, m, d) for n in range(1, 10) for m in range(1, 10) for d in range(1, 10)
                if n % m == 0 and d % m == 0 and (shape.is_free("d") or d == n)}
        assert got == want
        assert set(small_sizes(shape, 9)) == {(n, d, m) for n, m, d in want}


def test_breaking_sizes_break_one_condition_only():
    for shape in (D_IS_N, ANY_D):
        for which in shape.free:
            for n, d, m in shape.breaking(which, 6):
                at = {"n": n, "d": d}
                assert m >= 2 and {e for e in shape.free if at[e] % m} == {which}
                assert shape.is_free("d") or d == n


def test_every_record_has_every_parameter_and_aliases_agree():
    for shape in (D_IS_N, ANY_D):
        for record in (shape.params(3, n=6, d=9), parameters(shape)):
            assert set(vars(record)) == set(PARAMETERS)
        ctx = Ctx(shape=shape)
        assert set(ctx.env) == set(PARAMETERS)
    assert D_IS_N.params(3, n=6, d=9).d == 6 and ANY_D.params(3, n=6, d=9).kd == 3


def test_square_false_is_the_older_spelling_of_any_d():
    assert replace(ALGO1, square=False).shape is ANY_D
    assert replace(replace(ALGO1, square=False), name="x").shape is ANY_D
    assert ALGO1.shape is D_IS_N


def test_a_parameter_added_without_its_handlers_fails_in_every_place_that_names_them():
    assert shapes.incomplete() == {}
    failing = shapes.incomplete(PARAMETERS + ("h",))
    assert {"counting.parameters", "Shape.sizes and Shape.breaking (n, d as extents)",
            "smt._smallest (n, d as extents)"} <= set(failing)
    assert all("not handled: h" in why for why in failing.values())
