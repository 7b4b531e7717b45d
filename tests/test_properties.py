"""The property registry: every kind of check declared once, with both twins."""

from dataclasses import replace

import pytest
from helpers.twins import assert_same_check_replays

from ringproof.proofs.cli.targets import registry
from ringproof.proofs.results import PROPERTIES, Verdict
from ringproof.proofs.ring.properties import KINDS, SOLVER_PROPERTIES, derive
from ringproof.proofs.ring.prover import verify
from ringproof.schedules.algo1 import variant as algo1_variant


def test_every_kind_has_both_twins_and_a_known_property():
    keys = [k.key for k in KINDS]
    assert len(keys) == len(set(keys))
    for k in KINDS:
        assert callable(k.symbolic) and callable(k.concrete), k.key
        assert k.prop is None or k.prop in SOLVER_PROPERTIES, k.key
    assert set(SOLVER_PROPERTIES) <= set(PROPERTIES)


@pytest.mark.parametrize("name", sorted(registry()))
def test_every_symbolic_check_is_made_by_a_registered_kind(name):
    """A check built outside the registry (no kind, or a name not from its kind's template) would
    have no concrete twin: the bounded tier and the replay could not check it."""
    by_key = {k.key: k for k in KINDS}
    for c in derive(registry()[name]):
        assert c.kind in by_key, (c.property, c.phase, c.name)
        assert c.property in SOLVER_PROPERTIES


def test_every_property_is_derived_for_the_registered_schedules():
    derived = {c.property for s in registry().values() for c in derive(s)}
    assert derived == set(SOLVER_PROPERTIES)


def test_a_refutation_must_replay_as_the_same_check():
    """The twin rule has teeth: a refutation replays only as the same check (tests/helpers/twins.py)."""
    schedule = algo1_variant(("phase1-assign",))
    refuted = [r for r in verify(schedule) if r.verdict is Verdict.REFUTED]
    assert refuted
    assert any(r.tier == "parametric" for r in refuted)
    for r in refuted:
        if r.tier == "parametric":      # a Z3 refutation; a bounded one is a concrete finding itself
            assert r.counterexample.replay.get("same_check") is True, (r.property, r.phase, r.reason)
        assert_same_check_replays(schedule, r)
    r = refuted[0]
    forged = replace(r, counterexample=replace(r.counterexample, check="a check nobody wrote"))
    with pytest.raises(AssertionError, match="concrete twin finds nothing"):
        assert_same_check_replays(schedule, forged)
