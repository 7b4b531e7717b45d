"""The parametric verdicts of a schedule against exhaustive enumeration of every (n, m), m | n,
n ≤ 24: a proof must see no failure, a refutation must be one enumeration finds (no smaller than the
smallest failing size), and unknown must neither hide nor claim one. The callers pass the results of
a proof their module has already run (test_mutants.py's `proofs`, test_algo1.py's `parametric`)."""

from ringproof.proofs.ring.bounded import check_sizes
from ringproof.proofs.results import Verdict


def assert_agrees_with_enumeration(schedule, results, max_n=24):
    param = {(r.property, r.phase): r for r in results if r.property != "counts"}
    enum = check_sizes(schedule, max_n)
    for key, r in param.items():
        hit = enum.get(key)
        if r.verdict is Verdict.PROVED:
            assert hit is None, f"{key}: proved, but enumeration fails at {hit}"
        elif r.verdict is Verdict.REFUTED:
            assert hit is not None, f"{key}: refuted, but enumeration finds nothing up to {max_n}"
            # it replays at its size, so it is no smaller than the smallest size that fails
            assert (r.counterexample.n, r.counterexample.m) >= hit[:2], (key, r.counterexample, hit)
        else:   # unknown must not hide a failure the enumeration sees... nor claim one
            assert hit is None, f"{key}: unknown although n={hit[0]}, m={hit[1]} fails"
