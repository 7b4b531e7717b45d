"""Z3 facts about the unrolling formulas: verdicts, counterexamples replayed on the model."""

import json

import pytest
import z3

from ringproof.model.unrolling.utilization import Memory, SpatialUnrolling, conv, evaluate_layer, pe_utilization
from ringproof.proofs.unrolling.facts import FACTS, MISREADINGS, Fact, Verdict, prove


@pytest.fixture(scope="module")
def fact_results():
    return {f.name: prove(f) for f in FACTS}


@pytest.mark.parametrize("name", [f.name for f in FACTS])
def test_fact_is_proved(fact_results, name):
    result = fact_results[name]
    assert result.verdict is Verdict.PROVED, result.reason
    assert result.counterexample == ()


def test_facts_cite_only_facts():
    names = {f.name for f in FACTS}
    assert all(set(f.uses) <= names for f in FACTS)


def _cex(fact_name):
    fact = next(f for f in MISREADINGS if f.name == fact_name)
    result = prove(fact)
    assert result.verdict is Verdict.REFUTED
    assert all(type(v) is int for _, v in result.counterexample)
    json.dumps(result.as_dict())
    return result, dict(result.counterexample)


def test_literal_matmul_cast_is_refuted_with_a_replayable_counterexample():
    result, c = _cex("matmul-cast-literal")
    H, side, Q, R = c["H"], c["sqrtP"], c["Q"], c["R"]
    literal_macs = H * (H * Q) * (H * R) * side * side
    assert literal_macs != H * side * side * Q * R
    assert max(c.values()) == 2  # smallest: two heads


def test_pruning_under_printed_conditions_is_refuted_on_the_model():
    result, c = _cex("pruning-under-printed-conditions")
    n, f = c["Ox"], c["Fx_u=Fy_u"]
    assert c["Oy"] == n and c["Ox_u"] * c["Oy_u"] == c["Ox_u'"] * c["Oy_u'"]
    layer = conv("cex", K=1, C=1, Ox=n, Oy=n, Fx=f, Fy=f)
    kept = SpatialUnrolling.of(Ox=c["Ox_u"], Oy=c["Oy_u"], Fx=f, Fy=f)
    other = SpatialUnrolling.of(Ox=c["Ox_u'"], Oy=c["Oy_u'"], Fx=f, Fy=f)
    assert pe_utilization(layer, kept) < pe_utilization(layer, other)
    ample = Memory(10**6, 10**6, 10**6)
    assert evaluate_layer(layer, kept, ample).cycles > evaluate_layer(layer, other, ample).cycles
    assert max(c.values()) == 4


def _fact(claim, hyp=lambda x: [x >= 1]):
    def build(ctx):
        x = z3.Int("x", ctx)
        return {"x": x}, hyp(x), claim(x)
    return Fact("toy", "toy", build)


def test_false_claim_gives_the_smallest_int_counterexample():
    result = prove(_fact(lambda x: x * x < 10))
    assert result.verdict is Verdict.REFUTED and result.counterexample == (("x", 4),)


def test_vacuous_assumptions_are_not_a_proof():
    result = prove(_fact(lambda x: x < 0, hyp=lambda x: [x >= 1, x <= 0]))
    assert result.verdict is Verdict.UNKNOWN and "vacuous" in result.reason


def test_timeout_is_never_reported_as_proved():
    hard = next(f for f in FACTS if f.name == "pe-utilization-one-iff-divides")
    result = prove(hard, timeout_ms=1)
    assert result.verdict is Verdict.UNKNOWN
