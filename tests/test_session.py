"""A session owns every cache of the ring prover, under one budget: nothing is cached at module level,
two budgets never share an answer, and a library call sets nothing process-wide."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ringproof.proofs.options import Options
from ringproof.proofs.ring.budgets import Budget
from ringproof.proofs.ring.counting import counts
from ringproof.proofs.ring.prover import verify
from ringproof.proofs.ring.session import Session
from ringproof.schedules.algo1 import ALGO1

RING = Path(__file__).resolve().parents[1] / "proofs" / "ring"


def _module_level_caches(path: Path) -> list[str]:
    """Names bound at module level to an empty dict or list (how a cache starts; tables of
    constants are written out)."""
    out = []
    for node in ast.parse(path.read_text()).body:
        value = getattr(node, "value", None)
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if (isinstance(value, ast.Dict) and not value.keys) or (isinstance(value, ast.List) and not value.elts):
            out += [t.id for t in targets if isinstance(t, ast.Name)]
    return out


def test_no_ring_prover_module_keeps_a_cache_of_its_own():
    found = {p.name: names for p in RING.rglob("*.py") if (names := _module_level_caches(p))}
    assert found == {}


def test_sessions_are_kept_apart_by_budget():
    assert Session.for_budget(Budget()) is Session.for_budget(Budget())
    assert Session.for_budget(Budget(seed=1)) is not Session.for_budget(Budget())
    own = Session(Budget())
    assert own is not Session.for_budget(Budget())
    c = counts(ALGO1, own)
    assert own.counted and counts(ALGO1, own) is c
    assert Session(Budget()).counted == {}


def test_options_set_the_budget_and_a_session_must_match_it():
    opts = Options(("well-formed",), timeout=3.0, seed=7, cross_check="cvc5", cross_timeout=5.0)
    assert opts.budget == Budget(3000, 7, second_solver="cvc5", second_timeout_ms=5000)
    with pytest.raises(ValueError):
        verify(ALGO1, Options(("well-formed",)), Session(Budget(seed=1)))
    session = Session(Options().budget)
    assert verify(ALGO1, Options(("well-formed",), jobs=1), session)
    assert session.proven
