"""Mutants of Algorithm 1 are refuted, and every counterexample replays concretely; the parametric
verdicts of every mutant and legal transformation agree with exhaustive enumeration of every
(n, m), m | n, n ≤ 24 (each schedule proved once in this module: `proofs`)."""

import pytest

from helpers.agreement import assert_agrees_with_enumeration
from helpers.twins import assert_same_check_replays

from ringproof.model.ring.machine import run
from helpers.mutants import LEGAL, REFUTED
from ringproof.proofs.ring.prover import verify
from ringproof.proofs.results import Verdict


@pytest.fixture(scope="module")
def proofs():
    """name -> the results of the schedule's whole proof (default options: tier parametric), proved
    once in this module for the tests that read them."""
    done = {}

    def results(name):
        if name not in done:
            done[name] = verify({**REFUTED, **LEGAL}[name])
        return done[name]
    return results


@pytest.mark.parametrize("name", list(REFUTED) + list(LEGAL))
def test_parametric_agrees_with_enumeration(name, proofs):
    assert_agrees_with_enumeration({**REFUTED, **LEGAL}[name], proofs(name))


@pytest.mark.parametrize("name", list(REFUTED))
def test_mutant_is_refuted_and_replays(name, proofs):
    results = proofs(name)
    refuted = [r for r in results if r.verdict is Verdict.REFUTED]
    assert refuted, f"{name} was not refuted"
    for r in refuted:
        cex = r.counterexample
        assert cex is not None and cex.replay.get("confirmed")
        # replay independently: the same check fails when that (n, m) is enumerated
        assert_same_check_replays(REFUTED[name], r)


@pytest.mark.parametrize("name", [k for k in REFUTED if "witness" not in k])
def test_schedule_mutants_fail_on_the_ring_model(name):
    """Mutants that change what the ring does (not only a witness) break the machine or y."""
    assert not run(REFUTED[name], 6, 3).ok


def test_smallest_counterexamples_are_pinned(proofs):
    got = {}
    for name in ("missing send", "send on the last step", "wrong phase order"):
        r = next(r for r in proofs(name) if r.verdict is Verdict.REFUTED)
        got[name] = (r.property, r.phase, r.counterexample.n, r.counterexample.m)
    assert got == {"missing send": ("ring-locality", "phase1", 2, 2),
                   "send on the last step": ("data-flow", "phase2a", 2, 2),
                   "wrong phase order": ("data-flow", "phase2b", 1, 1)}


@pytest.mark.parametrize("name", list(LEGAL))
def test_legal_transformations_are_proved(name, proofs):
    assert all(r.verdict is Verdict.PROVED for r in proofs(name))
    assert run(LEGAL[name], 6, 3).ok
