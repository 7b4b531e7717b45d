"""What the normalizer reuses gives what working afresh gives: a digit term is the one z3.simplify
builds from the same operands (`Ctx.built`); a carry window is kept by the assumptions it was proved
under, with the side conditions it rested on (`Ctx._tightest`); a window's two first bounds asked of
Z3 in one query give the window asking each alone gives."""

from __future__ import annotations

import z3

from ringproof.proofs.ring.budgets import Budget
from ringproof.proofs.ring.lemmas import MOD_WINDOWS, carry
from ringproof.proofs.ring.normalize import Ctx
from ringproof.proofs.ring.session import Session


def test_a_built_term_is_the_one_simplify_builds_from_the_same_operands():
    ctx = Ctx()
    x, y, c = z3.Int("x"), z3.Int("y"), z3.Bool("c")
    cases = [("add", (x, y + 1), x + (y + 1)), ("sub", (x, y), x - y), ("sub", (y, x), y - x),
             ("neg", (x - y,), -(x - y)), ("ite", (c, x + 0, y), z3.If(c, x + 0, y)),
             ("scale", (3, x + y), 3 * (x + y)), ("mul", (x, y + y), x * (y + y)), ("same", (x + 0,), x + 0)]
    for op, args, afresh in cases:
        got = ctx.built(op, *args)
        assert z3.eq(got, z3.simplify(afresh)), op
        assert ctx.built(op, *args) is got, op           # kept: asked again, nothing is built
    assert not z3.eq(ctx.built("sub", x, y), ctx.built("sub", y, x))
    for op, afresh in (("eq", z3.And(x == 0, y == 0)), ("lt", x < 0), ("le", z3.Or(x < 0, z3.And(x == 0, y == 0)))):
        assert z3.eq(ctx.digit_compare(x, y, op), afresh) and ctx.digit_compare(x, y, op) is ctx.digit_compare(x, y, op)
    assert z3.eq(ctx.carry(x, ctx.m, -1, 2), carry(x, ctx.m, -1, 2))
    assert not z3.eq(ctx.carry(x, ctx.m, -1, 2), ctx.carry(x, ctx.m, 0, 2))


def test_a_window_is_kept_by_the_assumptions_it_was_proved_under():
    session = Session(Budget())
    x = z3.Int("x")

    def window(low: int):
        ctx = Ctx(session=session)
        ctx.assumptions += [low * ctx.m <= x, x < ctx.m]
        return ctx._window(x, ctx.m, MOD_WINDOWS, "test"), ctx.side_conditions

    tight, wide = window(0), window(-1)
    assert tight[0] == (0, 1) and wide[0] == (-1, 1)     # the same term, other assumptions
    assert len(session.windows) == 2
    assert window(0) == tight                            # a hit rests on the same side conditions
    assert tight[1] > 0


def _window_and_z3_calls(assume):
    """The carry window of x under `assume(m)`, and how many Z3 queries it took."""
    ctx, x, calls = Ctx(), z3.Int("x"), []
    ctx.assumptions += assume(ctx.m, x)
    z3_check = ctx._z3_check

    def counted(*args):
        calls.append(args[0])
        return z3_check(*args)

    ctx._z3_check = counted
    return ctx._window(x, ctx.m, MOD_WINDOWS, "test"), len(calls)


def test_the_first_bounds_of_a_window_share_one_query_only_where_both_hold():
    # x ∈ {0, m − 1}: no box, so Z3 decides; both 0 ≤ x and x < m hold: one query
    assert _window_and_z3_calls(lambda m, x: [z3.Or(x == 0, x == m - 1)]) == ((0, 1), 1)
    # x ∈ {0, 1}: x < m fails at m = 1; the joint query's counter-model refutes it, 0 ≤ x and
    # x < 2m are asked alone
    assert _window_and_z3_calls(lambda m, x: [z3.Or(x == 0, x == 1)]) == ((0, 2), 3)
    # x ∈ {−1, 0}: the joint query's counter-model refutes 0 ≤ x (not asked again); −m ≤ x and
    # x < m share the next query
    assert _window_and_z3_calls(lambda m, x: [z3.Or(x == -1, x == 0)]) == ((-1, 1), 2)
