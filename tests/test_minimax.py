"""MINIMAX solver: HiGHS and Z3 agree, bounds are sound, and the paper's claims' counterexamples are
the smallest ones (checked by brute force, independently of both solvers)."""

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ringproof.model.device.instances import Device, generate
from ringproof.proofs.balance.minimax import (CLAIMS, PREMISES, Verdict, certified_bound, certify, check_claim, prove_level_cbmf,
                            small_instances, solve, z3_optimum)
from ringproof.model.device.batch import HEURISTICS, BatchProblem

small = st.builds(
    generate, patches=st.integers(1, 9), banks=st.integers(1, 3), clusters=st.integers(3, 4),
    skew=st.sampled_from([0.0, 0.5, 0.8, 1.0]), overlap=st.sampled_from([0.0, 0.5]), seed=st.integers(0, 3),
    topology=st.sampled_from(["ring", "line"]), per_hop=st.sampled_from([Fraction(0), Fraction(1), Fraction(5, 2)]))


def brute_force(problem: BatchProblem) -> Fraction:
    """Optimal makespan by trying every assignment (tiny instances only)."""
    return min(problem.makespan(a) for a in itertools.product(range(problem.clusters), repeat=problem.patches))


@settings(max_examples=40, deadline=None)
@given(small)
def test_highs_and_z3_agree_on_the_optimum(problem):
    best = solve(problem)
    assert best.proven and best.makespan == best.lower_bound
    assert problem.makespan(best.assignment) == best.makespan
    assert z3_optimum(problem) == best.makespan
    assert certify(problem, best.makespan).verdict is Verdict.PROVED


@settings(max_examples=25, deadline=None)
@given(small.filter(lambda p: p.patches <= 6))
def test_optimum_matches_brute_force_with_and_without_symmetry_breaking(problem):
    expected = brute_force(problem)
    assert solve(problem).makespan == expected == solve(problem, symmetry=False).makespan


@settings(max_examples=30, deadline=None)
@given(st.builds(generate, patches=st.integers(0, 200), banks=st.integers(1, 4), clusters=st.integers(4, 12),
                 skew=st.floats(0, 1), overlap=st.floats(0, 1), seed=st.integers(0, 9)))
def test_optimum_is_at_most_every_heuristic_and_at_least_the_bound(problem):
    best = solve(problem)
    assert best.proven
    assert Fraction(certified_bound(problem), problem.unit) <= best.makespan
    for name, make in HEURISTICS.items():
        assert best.makespan <= problem.makespan(make(problem)), name


def test_certify_refutes_wrong_optima():
    p = generate(9, 2, 3, 0.8, 0.5, seed=1)
    opt = solve(p).makespan
    step = Fraction(1, p.unit)
    above, below = certify(p, opt + step), certify(p, opt - step)
    assert above.verdict is Verdict.REFUTED and above.better is not None and above.better <= opt
    assert below.verdict is Verdict.REFUTED and "no assignment" in below.reason


def test_time_limit_never_claims_an_unproven_optimum():
    p = generate(1536, 4, 16, 0.7, 0.1)
    quick = solve(p, time_limit=0.02)
    assert quick.proven == (quick.makespan == quick.lower_bound)
    assert quick.lower_bound <= solve(p).makespan <= quick.makespan
    assert p.makespan(quick.assignment) == quick.makespan and quick.gap < 0.05


def test_benchmark_instance_ratios():
    p = generate(384, 4, 32, 0.7, 0.1)
    best = solve(p)
    ratio = {n: p.makespan(f(p)) / best.makespan for n, f in HEURISTICS.items()}
    assert best.proven and ratio["greedy"] <= Fraction(115, 100)
    assert ratio["RR"] > Fraction(3, 2) and ratio["CBMF"] > Fraction(3, 2)


# the smallest counterexamples, pinned: (claim, overlap) -> (shares, near, heuristic makespan, optimum)
PINNED = {
    ("cbmf-optimal", False): ((("1", "0"), ("1", "0"), ("1", "0")), (0, 1), "3", "2"),
    ("cbmf-optimal", True): ((("1", "0"), ("3/4", "1/4")), (0, 1), "9/4", "7/4"),
    ("rr-only-one-bank", False): ((("1", "0"), ("0", "1")), (0, 1), "1", "1"),
    ("rr-only-one-bank", True): ((("3/4", "1/4"),), (0, 1), "5/4", "5/4"),
    ("rr-one-bank", False): ((("0", "1"),), (0, 1), "2", "1"),
    ("rr-first-bank", False): ((("1", "0"), ("1", "0")), (0, 1, 0), "2", "1"),
}


@pytest.mark.parametrize("key", sorted(PINNED))
def test_claim_counterexamples_are_pinned_and_minimal(key):
    name, overlap = key
    claim = next(c for c in CLAIMS if c.name == name)
    found = check_claim(claim, overlap=overlap)
    shares, near, span, opt = PINNED[key]
    ce = found.counterexample
    assert ce is not None
    assert tuple(tuple(str(x) for x in row) for row in ce.shares) == shares and ce.near == near
    assert (str(found.heuristic_makespan), str(found.optimum)) == (span, opt)
    assert brute_force(ce) == found.optimum and certify(ce, found.optimum).verdict is Verdict.PROVED
    # minimal: brute force finds no failure in any instance that comes earlier in the search order
    heuristic, premise = HEURISTICS[claim.heuristic], PREMISES[claim.premise]
    for p in small_instances(len(shares), len(near), ce.banks, overlap):
        if p == ce:
            break
        optimal = p.makespan(heuristic(p)) == brute_force(p)
        assert (not optimal or premise(p)) if claim.converse else (optimal or not premise(p))


def test_cbmf_is_optimal_on_level_banks_small_and_for_every_size():
    check = check_claim(next(c for c in CLAIMS if c.name == "cbmf-level"), max_patches=4, max_clusters=3)
    assert check.counterexample is None and check.checked > 50
    assert all(prove_level_cbmf(q) is Verdict.PROVED for q in range(1, 17))


@pytest.mark.slow
def test_cbmf_level_holds_on_larger_small_instances():
    check = check_claim(next(c for c in CLAIMS if c.name == "cbmf-level"), max_patches=6, max_clusters=4)
    assert check.counterexample is None


def test_line_topology_changes_the_optimum():
    shares = [(1, 0, 0)] * 8  # ring: 4 + 2 + 2 patches by time 4; line: 4 + 2 + 1
    ring = Device(3, (0, 1, 2)).problem(shares)
    line = Device(3, (0, 1, 2), topology="line").problem(shares)
    assert (solve(ring).makespan, solve(line).makespan) == (4, 5)


def _fair_claim():
    from ringproof.proofs.balance.minimax import Claim

    return Claim("cbmf-weighted", "CBMF with the paper's (weighted) load balancing is optimal", "weighted", "always")


@pytest.mark.slow
def test_cbmf_with_load_balancing_fails_on_overlapping_patches_as_the_report_shows():
    from ringproof.proofs.balance.minimax import check_claim
    from ringproof.proofs.report.front import CBMF_CASES

    found = check_claim(_fair_claim(), overlap=True)
    _, heuristic, shares, near = CBMF_CASES[1]
    assert heuristic == "weighted" and found.counterexample is not None
    assert found.counterexample.shares == tuple(tuple(Fraction(x) for x in row) for row in shares)
    assert found.counterexample.near == near and found.heuristic_makespan > found.optimum


@pytest.mark.slow
def test_cbmf_with_load_balancing_holds_on_small_pure_instances():
    from ringproof.proofs.balance.minimax import check_claim

    assert check_claim(_fair_claim(), overlap=False).counterexample is None
