"""Lower-bound lemmas of proofs/search/lower_bounds.py."""

import z3

from ringproof.proofs.search.lower_bounds import _z3_valid, prove_all
from ringproof.proofs.search.validity import valid


def test_every_lemma_is_proved():
    failed = [lemma.name for lemma in prove_all() if not lemma.proved]
    assert failed == []


def test_a_false_claim_is_not_proved():
    n = z3.Int("n")
    assert not _z3_valid(z3.ForAll([n], z3.Implies(n >= 2, 2 * n >= n + 3)))


def test_unknown_is_not_proved():
    """A true claim Z3 cannot settle within its resource limit is unknown, and unknown is not proved
    (the limit is counted in deterministic units, so this does not depend on the load)."""
    n = z3.Int("n")
    claim = z3.ForAll([n], z3.Implies(n >= 2, (n - 1) * (n + 2) >= 2 * n))
    assert valid(claim, rlimit=20_000_000) and _z3_valid(claim)
    assert not valid(claim, rlimit=1)
