"""Lower-bound lemmas of proofs/search/lower_bounds.py."""

import z3

from ringproof.proofs.search.lower_bounds import _z3_valid, prove_all


def test_every_lemma_is_proved():
    failed = [lemma.name for lemma in prove_all() if not lemma.proved]
    assert failed == []


def test_a_false_claim_is_not_proved():
    n = z3.Int("n")
    assert not _z3_valid(z3.ForAll([n], z3.Implies(n >= 2, 2 * n >= n + 3)))
