"""Batch heuristics: valid assignments and the behaviour each one promises."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ringproof.model.device.instances import Device, generate
from ringproof.model.device.batch import HEURISTICS, BatchProblem, cbmf, cbmf_banks, evaluate_assignment, round_robin
from ringproof.errors import BadInput

instances = st.builds(
    generate, patches=st.integers(0, 60), banks=st.integers(1, 4), clusters=st.integers(4, 9),
    skew=st.sampled_from([0.0, 0.25, 0.5, 0.7, 1.0]), overlap=st.sampled_from([0.0, 0.3, 1.0]),
    seed=st.integers(0, 5), topology=st.sampled_from(["ring", "line"]))


@settings(max_examples=60, deadline=None)
@given(instances)
def test_every_heuristic_assigns_each_patch_exactly_once(problem):
    for name, make in HEURISTICS.items():
        a = make(problem)
        assert len(a) == problem.patches and all(0 <= q < problem.clusters for q in a), name
        loads = problem.loads(a)
        assert loads.sum() == sum(int(problem.costs[p, q]) for p, q in enumerate(a))


def test_round_robin_ignores_banks():
    p = generate(10, 2, 4, 1.0, 0.0)
    assert round_robin(p) == (0, 1, 2, 3, 0, 1, 2, 3, 0, 1)


def test_cbmf_keeps_each_patch_near_its_largest_share():
    p = generate(200, 4, 8, 0.6, 0.5, seed=2)
    banks = cbmf_banks(p)
    for row, b, q in zip(p.shares, banks, cbmf(p)):
        assert row[b] == max(row) and p.near[q] == b


def test_cbmf_ties_depend_only_on_seed():
    rows = [(Fraction(1, 2), Fraction(1, 2))] * 16
    lat = ((1, 2), (2, 1))
    a, b = (cbmf_banks(BatchProblem(tuple(rows), (0, 1), lat, seed=s)) for s in (0, 1))
    assert a == cbmf_banks(BatchProblem(tuple(rows), (0, 1), lat, seed=0))
    assert set(a) == {0, 1} and a != b


def test_weighted_beats_plain_balancing_when_hops_cost():
    p = generate(384, 4, 32, 0.7, 0.1)
    spans = {name: p.makespan(make(p)) for name, make in HEURISTICS.items()}
    assert spans["weighted"] < spans["balanced"] < spans["CBMF"]


def test_makespan_and_utilization_are_exact():
    d = Device(2, (0, 1))
    p = d.problem([(1, 0), (Fraction(3, 4), Fraction(1, 4))])
    s = evaluate_assignment(p, "x", (0, 1))
    assert s.makespan == Fraction(7, 4)  # 3/4 * 2 + 1/4 * 1 on cluster 1
    assert s.utilization == pytest.approx((1 + 5 / 4) / (2 * 7 / 4))


def test_bad_assignments_are_rejected():
    p = generate(4, 2, 2, 0.5, 0.0)
    with pytest.raises(ValueError, match="4 patches"):
        p.loads((0, 1))
    with pytest.raises(ValueError, match="cluster 5"):
        p.loads((0, 1, 5, 0))


def test_problem_checks_its_arguments():
    lat = ((1, 2), (2, 1))
    with pytest.raises(BadInput, match="sum to 1"):
        BatchProblem(((Fraction(1, 2), Fraction(1, 3)),), (0, 1), lat)
    with pytest.raises(BadInput, match="near no bank"):
        BatchProblem(((1, 0),), (0, -1), lat)
    with pytest.raises(BadInput, match="positive"):
        BatchProblem(((1, 0),), (0, 1), ((1, 0), (2, 1)))
