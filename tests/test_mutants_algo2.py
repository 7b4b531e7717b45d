"""Mutants of Algorithm 2 are refuted, every counterexample replays, and the ring model breaks."""

import pytest

from helpers.twins import assert_same_check_replays

from ringproof.model.ring.machine import run
from helpers.mutants_algo2 import REFUTED
from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.results import Verdict

# smallest counterexample (property, phase, n, m) and a size where the ring model fails
EXPECTED = {
    "reuse one hop too far": (("data-flow", "phase2a", 3, 1), (6, 3)),
    "reuse in the wrong direction": (("coverage", "phase1", 3, 1), (6, 3)),
    "missing store as w'_BA": (("data-flow", "phase2a", 3, 1), (6, 3)),
    "even-n group dropped": (("coverage", "phase1", 2, 1), (6, 3)),
    "a diagonal computed twice": (("coverage", "phase1", 2, 1), (6, 3)),
    "an extra transfer cycle removed": (("data-flow", "phase2a", 5, 5), (5, 5)),
}


@pytest.mark.parametrize("name", list(REFUTED))
def test_mutant_is_refuted_and_replays(name):
    s = REFUTED[name]
    want, ring_size = EXPECTED[name]
    refuted = [r for r in verify(s, Options(properties=(want[0],), max_n=12))
               if r.verdict is Verdict.REFUTED]
    assert refuted, f"{name} was not refuted"
    for r in refuted:
        cex = r.counterexample
        assert cex is not None and cex.replay.get("confirmed")
        assert_same_check_replays(s, r)
    first = min(refuted, key=lambda r: (r.counterexample.n, r.counterexample.m, r.phase != "phase1"))
    assert (first.property, first.phase, first.counterexample.n, first.counterexample.m) == want
    assert not run(s, *ring_size).ok
