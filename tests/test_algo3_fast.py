"""algo3-fast: the ring model against numpy, prover verdicts against enumeration, counts, the
bit-level machine, and its proved distance to Algorithm 3 and to the lower bound."""

import pytest

from ringproof.model.bitlevel import check_run
from ringproof.model.bitlevel.bridge import to_run
from ringproof.model.ring.machine import run
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.ring.bounded import check_sizes
from ringproof.proofs.figures.counting import check_claim, closed, counts, derived_parameters
from ringproof.proofs.ring.prover import Options
from ringproof.proofs.ring.prover import verify as _verify
from ringproof.proofs.ring.session import Session
from ringproof.proofs.results import DEFAULT_PROPERTIES, Verdict
from ringproof.proofs.search import gaps
from ringproof.proofs.search.bound import bound_value
from ringproof.proofs.search.sat_check import sat_check_run
from ringproof.schedules.algo3 import ALGO3
from ringproof.schedules.algo3_fast import ALGO3_FAST, CLAIMS

SQUARE = [(n, n) for n in range(3, 13)]


@pytest.fixture(scope="module")
def derived():
    """The derived counts, found once for the module (seconds each time)."""
    return counts(ALGO3_FAST)


@pytest.mark.parametrize("n,m", [(3, 3), (4, 4), (5, 5), (6, 6), (9, 9), (12, 12)])
def test_ring_model_matches_numpy(n, m, derived):
    r = run(ALGO3_FAST, n, m)
    assert r.ok, r.violations
    assert r.max_rel_error <= 1e-9
    assert r.cycles == derived.at(n, m)["cycles"] == run(ALGO3, n, m).cycles - 1


def test_the_side_condition_is_n_equal_to_m_from_3_on():
    assert [(n, m) for n in range(1, 8) for m in range(1, n + 1) if n % m == 0 and ALGO3_FAST.admits(n, m)] == \
        [(3, 3), (4, 4), (5, 5), (6, 6), (7, 7)]


@pytest.fixture(scope="module")
def parametric():
    return _verify(ALGO3_FAST, Options(max_n=16), Session(Options().budget))


def test_every_property_is_proved_for_all_sizes(parametric):
    bad = [(r.property, r.phase, r.reason) for r in parametric
           if (r.verdict, r.tier) != (Verdict.PROVED, "parametric")]
    assert bad == [] and {r.property for r in parametric} == set(DEFAULT_PROPERTIES)


def test_parametric_verdicts_agree_with_enumeration(parametric):
    enum = check_sizes(ALGO3_FAST, 12)
    for r in parametric:
        if r.property != "counts":
            assert enum[(r.property, r.phase)] is None, (r.property, r.phase)


def test_derived_counts_equal_enumeration(derived):
    assert closed(derived.cycles)
    for n, m in SQUARE:
        tr = build_trace(ALGO3_FAST, n, m)
        ops = {}
        for pt in tr.phases:
            ops[pt.op.value] = ops.get(pt.op.value, 0) + int(pt.active.sum())
        want = derived.at(n, m)
        assert tr.cycles == want["cycles"] == (2 * (n // 2) + 4) * n - 1, n
        assert ops["MAC"] == want["ops"]["MAC"] == n * n * (n + 1), n
        assert ops["EAC"] == ops["DIV"] == want["ops"]["EAC"] == want["ops"]["DIV"] == n * (n + 1) // 2, n
    for what in ("cycles", "MAC", "EAC", "DIV"):
        target = derived.cycles if what == "cycles" else derived.ops[what]
        assert check_claim(target, CLAIMS[what], ALGO3_FAST.shape,
                           derived_params=derived_parameters(ALGO3_FAST)) is None, what


@pytest.mark.parametrize("n", [3, 4, pytest.param(5, marks=pytest.mark.slow), pytest.param(6, marks=pytest.mark.slow)])
def test_valid_on_the_bit_level_machine(n):
    """n = 5, 6 in the slow run; n = 3, 4 keep the subject in the default run."""
    r = to_run(ALGO3_FAST, n, n)
    assert r.T == to_run(ALGO3, n, n).T - 1
    assert check_run(r) == [] and sat_check_run(r).valid is True


def test_it_meets_the_bound_at_n_3_only(derived):
    assert [n for n, m in SQUARE if derived.at(n, m)["cycles"] == bound_value("masked", n, m)] == [3]


def test_the_gap_statements_are_proved():
    assert all(g.proved for g in gaps.algo3_fast_gaps())


def test_a_false_gap_statement_is_not_proved(derived):
    at_3_too = gaps._check("wrong", "", derived.cycles - gaps.bound_at_d_n("masked"),
                           lambda t, zn, zm: t > 0, lambda zn, zm, zk: [zk == 1, zn >= 3], gaps.SQUARE)
    assert not at_3_too.proved         # n = 3 meets the bound


@pytest.mark.slow
def test_a_false_distance_to_algorithm_3_is_not_proved(derived):
    """Slow (counts of Algorithm 3 too); test_a_false_gap_statement_is_not_proved keeps the subject."""
    wrong = gaps._check("wrong", "", gaps.cycles(ALGO3) - derived.cycles,
                        lambda t, zn, zm: t == 2, lambda zn, zm, zk: [zk == 1, zn >= 3], gaps.SQUARE)
    assert not wrong.proved
