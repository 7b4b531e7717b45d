"""Algorithm 1: every property proved for all n, m; counts as closed forms; Table I."""

import pytest

from helpers.agreement import assert_agrees_with_enumeration
from ringproof.proofs.figures.counting import N, M, counts
from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.results import DEFAULT_PROPERTIES, Verdict
from ringproof.schedules.algo1 import ALGO1

TABLE_I_ALGO1 = {(3, 3): 24, (4, 4): 40, (5, 5): 60, (6, 3): 168, (6, 6): 84, (15, 5): 1440,
                 (15, 15): 480}   # Yu & Fujita, Table I, Algo.1 #Cycles


@pytest.fixture(scope="module")
def parametric():
    return verify(ALGO1, Options(tier="parametric"))


def test_every_property_of_every_phase_is_proved_parametrically(parametric):
    assert {r.property for r in parametric} == set(DEFAULT_PROPERTIES)
    assert {r.phase for r in parametric} >= {p.name for p in ALGO1.phases}
    bad = [(r.property, r.phase, r.reason) for r in parametric if r.verdict is not Verdict.PROVED]
    assert bad == []
    assert all(r.tier == "parametric" for r in parametric)


def test_parametric_agrees_with_enumeration(parametric):
    assert_agrees_with_enumeration(ALGO1, parametric)


def test_cycle_count_closed_form_matches_table_I():
    c = counts(ALGO1)
    assert (c.cycles - (2 * N**3 + 2 * N**2) / M).simplify() == 0
    for (n, m), cycles in TABLE_I_ALGO1.items():
        assert c.at(n, m)["cycles"] == cycles


def test_per_m_tier_proves_too():
    rs = verify(ALGO1, Options(tier="per-m", max_m=3, properties=("coverage", "no-conflict")))
    assert rs and all(r.verdict is Verdict.PROVED and r.tier == "per-m" for r in rs)


def test_a_wrong_claim_is_refuted_with_the_smallest_size():
    from dataclasses import replace
    wrong = replace(ALGO1, notes={"claims": {"cycles": "(2*n**3 + n**2)/m"}})
    (r,) = verify(wrong, Options(properties=("counts",)))
    assert r.verdict is Verdict.REFUTED
    assert (r.counterexample.n, r.counterexample.m) == (1, 1)
