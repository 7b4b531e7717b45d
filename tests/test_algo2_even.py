"""algo2-even: the ring model against numpy, prover verdicts against enumeration, counts, the
bit-level machine, and its proved distance to the lower bound and to algo2-fast."""

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
from ringproof.schedules.algo2_even import ALGO2_EVEN, CLAIMS
from ringproof.schedules.algo2_fast import ALGO2_FAST

EVEN = [(n, n) for n in range(2, 21, 2)]


@pytest.fixture(scope="module")
def derived():
    """The derived counts, once for the module (a derivation takes seconds; each test compares it)."""
    return counts(ALGO2_EVEN)


@pytest.mark.parametrize("n,m", [(2, 2), (4, 4), (6, 6), (8, 8), (12, 12)])
def test_ring_model_matches_numpy(n, m, derived):
    r = run(ALGO2_EVEN, n, m)
    assert r.ok, r.violations
    assert r.max_rel_error <= 1e-9
    assert r.cycles == derived.at(n, m)["cycles"] == bound_value("symmetric", n, m)


def test_the_side_condition_is_even_n_equal_to_m():
    assert [(n, m) for n in range(1, 9) for m in range(1, n + 1) if n % m == 0 and ALGO2_EVEN.admits(n, m)] == \
        [(2, 2), (4, 4), (6, 6), (8, 8)]


@pytest.fixture(scope="module")
def parametric():
    return _verify(ALGO2_EVEN, Options(max_n=16), Session(Options().budget))


def test_every_property_is_proved_for_all_sizes(parametric):
    bad = [(r.property, r.phase, r.reason) for r in parametric
           if (r.verdict, r.tier) != (Verdict.PROVED, "parametric")]
    assert bad == [] and {r.property for r in parametric} == set(DEFAULT_PROPERTIES)


def test_parametric_verdicts_agree_with_enumeration(parametric):
    enum = check_sizes(ALGO2_EVEN, 20)
    for r in parametric:
        if r.property != "counts":
            assert enum[(r.property, r.phase)] is None, (r.property, r.phase)


def test_derived_counts_equal_enumeration(derived):
    assert closed(derived.cycles)
    for n, m in EVEN:
        tr = build_trace(ALGO2_EVEN, n, m)
        ops = {}
        for pt in tr.phases:
            ops[pt.op.value] = ops.get(pt.op.value, 0) + int(pt.active.sum())
        want = derived.at(n, m)
        assert tr.cycles == want["cycles"] == bound_value("symmetric", n, m), n
        assert ops["MAC"] == want["ops"]["MAC"] == n ** 3 + n * n * (n + 1) // 2, n
        assert ops["EAC"] == ops["DIV"] == want["ops"]["EAC"] == n * n, n
    for what in ("cycles", "MAC", "EAC", "DIV"):
        target = derived.cycles if what == "cycles" else derived.ops[what]
        assert check_claim(target, CLAIMS[what], ALGO2_EVEN.shape,
                           derived_params=derived_parameters(ALGO2_EVEN)) is None, what


@pytest.mark.parametrize("n", [2, 4, 6])
def test_valid_on_the_bit_level_machine(n):
    r = to_run(ALGO2_EVEN, n, n)
    assert r.T == bound_value("symmetric", n, n)
    assert check_run(r) == [] and sat_check_run(r).valid is True


def test_the_gap_statements_are_proved_and_a_false_one_is_not():
    assert all(g.proved for g in gaps.algo2_even_gaps())
    wrong = gaps._check("wrong", "", gaps.cycles(ALGO2_FAST) - gaps.cycles(ALGO2_EVEN),
                        lambda t, zn, zm: t == zn, lambda zn, zm, zk: [zk == 1, zn % 2 == 0], gaps.EVEN_SQUARE)
    assert not wrong.proved


def test_the_report_draws_it_at_the_nearest_size_its_side_condition_admits():
    from ringproof.proofs.report.collect import picture_size
    from ringproof.schedules.algo1 import ALGO1

    assert picture_size(ALGO2_EVEN, (4, 2)) == (4, 4) and picture_size(ALGO2_EVEN, (5, 2)) == (6, 6)
    assert picture_size(ALGO1, (4, 2)) == (4, 2)
