"""The operator table is the one list of operators: every walker and backend agrees with it, and an
operator added to it without its handlers fails, naming each place that does not handle it."""

from __future__ import annotations

import pytest

import ringproof.proofs.ring.intervals  # noqa: F401  (each module checks itself on import)
from ringproof.proofs.ring import formulas
from ringproof.proofs.ring.normalize import Ctx
from ringproof.schedules import operators
from ringproof.schedules.expr import INT, Term, evaluate, render, var
from ringproof.schedules.operators import OPERATORS, Operator

PLACES = {  # place -> the sorts of operator it handles
    "expr.render": ("int", "bool"), "expr.Backend fields": ("int", "bool"),
    "expr: Python's operators": ("int", "bool"), "normalize.Ctx.val": ("int",),
    "normalize.Ctx.cond": ("bool",), "intervals._OPS": ("int",),
}


def test_every_walker_checks_itself_against_the_table():
    assert set(PLACES) <= set(operators.checked_places())
    assert operators.incomplete() == {}


@pytest.mark.parametrize("sort", ["int", "bool", "any"])
def test_an_operator_without_handlers_fails_in_every_place(monkeypatch, sort):
    monkeypatch.setitem(OPERATORS, "dummy", Operator("dummy", 1, sort, "dummy"))
    failing = operators.incomplete()
    expected = {p for p, sorts in PLACES.items() if sort == "any" or sort in sorts}
    assert expected <= set(failing)
    assert all("dummy" in failing[p] for p in expected)
    with pytest.raises(operators.IncompleteWalker, match="dummy"):
        operators.require_complete("a new walker", {op for op in OPERATORS if op != "dummy"})


def _example(op: Operator) -> Term:
    """A Term with operator op over the parameters (which every reader knows), in the fragment the
    normalizer handles."""
    n, m, k = var("n"), var("m"), var("k")
    cmp = Term("lt", (n, m))
    args = {"add": (n, k), "neg": (n,), "mul": (k, m), "mod": (n, m), "div": (n, m), "ite": (cmp, n, k),
            "not": (cmp,), "and": (cmp, Term("le", (m, n))), "or": (cmp, Term("le", (m, n)))}
    return Term(op.name, args.get(op.name, (n, m)))


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_every_operator_runs_on_every_reader(name):
    t = _example(OPERATORS[name])
    assert render(t)
    for env in ({"k": 5, "m": 2, "n": 10}, {"k": 1, "m": 3, "n": 3}):
        want = INT.operations()[name](*[evaluate(x, env) for x in t.args])
        assert evaluate(t, env) == want
        assert formulas._value(t, env, {}) == want
    ctx = Ctx()
    (ctx.cond if OPERATORS[name].sort == "bool" else ctx.val)(t)
