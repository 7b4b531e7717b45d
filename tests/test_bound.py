"""`prove bound`: the closed-form lower bound, proved for every n, checked against enumeration."""

import io
import json

import pytest
import sympy as sp

from ringproof.model.bitlevel.problem import BitProblem, spread_cycles
from ringproof.proofs.cli import main
from ringproof.proofs.search import bound
from ringproof.proofs.search.bound import bound_value, prove_bound


@pytest.mark.parametrize("variant", ["plain", "symmetric", "masked"])
def test_every_lemma_of_the_bound_is_proved(variant):
    proof = prove_bound(variant)
    assert proof.proved and all(s.proved for s in proof.steps), [s.name for s in proof.steps if not s.proved]


@pytest.mark.parametrize("variant", ["plain", "symmetric", "masked"])
def test_closed_form_equals_the_lemmas_by_enumeration(variant):
    for n in range(1, 11):
        for m in (mm for mm in range(1, n + 1) if n % mm == 0):
            for d in (1, 2, 5, n):
                assert bound_value(variant, n, m, d) == sum(BitProblem(variant, n, m, d).phase_minimum())


def test_k_is_the_least_k_and_the_spread_of_lemma_l2b():
    K = sp.sympify(bound.K_FORM, locals={"n": bound.n})
    for n in range(1, 200):
        value = int(K.subs(bound.n, n))
        assert value == min(k for k in range(0, n + 2) if k * (k + 3) >= 2 * n)
        if n >= 2:
            assert value == spread_cycles(n, n)


def test_known_minima_meet_the_bound():
    """Search minima of docs/es_tables.md and issue 26 (all equal to the bound)."""
    minima = {("symmetric", 3, 3): 21, ("symmetric", 4, 4): 34, ("symmetric", 5, 5): 50,
              ("symmetric", 6, 6): 69, ("masked", 3, 3): 17, ("masked", 4, 4): 26, ("masked", 5, 5): 37,
              ("plain", 5, 5): 60, ("symmetric", 4, 2): 68, ("masked", 6, 2): 147, ("masked", 6, 3): 98}
    for (v, n, m), t in minima.items():
        assert bound_value(v, n, m) == t, (v, n, m)


def test_a_wrong_closed_form_is_not_proved(monkeypatch):
    wrong = bound.CLOSED["masked"].replace("n + ceiling", "n + 1 + ceiling")
    monkeypatch.setitem(bound.CLOSED, "masked", wrong)
    proof = prove_bound("masked")
    assert not proof.proved
    assert [s.name for s in proof.steps if not s.proved] == ["closed-masked", "enumerated"]


def test_cli_bound_json_and_bad_input():
    out = io.StringIO()
    assert main(["bound", "symmetric", "--json"], out, io.StringIO()) == 0
    doc = json.loads(out.getvalue())
    assert (doc["variant"], doc["proved"]) == ("symmetric", True)
    assert sp.sympify(doc["bound"]).subs({"n": 4, "m": 4, "d": 4}) == 34
    err = io.StringIO()
    assert main(["bound", "cubic"], io.StringIO(), err) == 64
    assert err.getvalue().count("\n") == 1


def test_a_transposable_declaration_must_follow_from_its_equation():
    from ringproof.errors import BadInput
    from ringproof.schedules.computation import computation

    shapes = {"q": "n d", "k": "n d", "w1": "n n"}
    assert computation("t", shapes, ["w1[A, B] += q[A, C] * q[B, C] if B <= A"], transposable=("w1",))
    for eq in ("w1[A, B] += q[A, C] * q[B, C]", "w1[A, B] += q[A, C] * k[B, C] if B <= A",
               "w1[A, B] += q[A, C] * q[B, C] if A <= B"):
        with pytest.raises(BadInput, match="declared transposable"):
            computation("t", shapes, [eq], transposable=("w1",))
