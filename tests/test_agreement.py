"""Parametric verdicts agree with exhaustive enumeration of every (n, m), m | n, n ≤ 24."""

import pytest

from helpers.mutants import LEGAL, REFUTED
from ringproof.proofs.ring.bounded import check_sizes
from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.results import Verdict
from ringproof.schedules.algo1 import ALGO1

SCHEDULES = {"algo1": ALGO1, **REFUTED, **LEGAL}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_parametric_agrees_with_enumeration(name):
    s = SCHEDULES[name]
    param = {(r.property, r.phase): r for r in verify(s, Options(tier="parametric"))
             if r.property != "counts"}
    enum = check_sizes(s, 24)
    for key, r in param.items():
        hit = enum.get(key)
        if r.verdict is Verdict.PROVED:
            assert hit is None, f"{key}: proved, but enumeration fails at {hit}"
        elif r.verdict is Verdict.REFUTED:
            assert hit is not None, f"{key}: refuted, but enumeration finds nothing up to 24"
            # it replays at its size, so it is no smaller than the smallest size that fails
            assert (r.counterexample.n, r.counterexample.m) >= hit[:2], (key, r.counterexample, hit)
        else:   # unknown must not hide a failure the enumeration sees... nor claim one
            assert hit is None, f"{key}: unknown although n={hit[0]}, m={hit[1]} fails"
