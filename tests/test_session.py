"""A session owns every cache of the ring prover, under one budget: nothing is cached at module level,
two budgets never share an answer, and a library call sets nothing process-wide."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ringproof.proofs.options import Options
from ringproof.proofs.ring.budgets import Budget
from ringproof.proofs.figures.counting import counts
from ringproof.proofs.ring.properties import derive
from ringproof.proofs.ring.prover import verify
from ringproof.proofs.ring.session import Session
from ringproof.proofs.ring.smt import discharge
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


def test_a_session_is_shared_only_where_it_is_passed():
    own = Session(Budget())
    c = counts(ALGO1, own)
    assert own.counted and counts(ALGO1, own) is c
    assert counts(ALGO1) is not c                    # passed none: a fresh session
    assert Session(Budget()).counted == {}
    assert not hasattr(Session, "for_budget")


def test_side_conditions_count_what_the_proof_rested_on_cached_or_not():
    """A proof's "rested on" figure is the same whether an earlier call in the session proved
    its side conditions (test order must not change a report)."""
    check = next(c for c in derive(ALGO1) if c.property == "no-conflict")
    session = Session(Budget())
    first = discharge(check, session)
    again = discharge(check, session)                # every side condition a cache hit
    assert first.verdict == again.verdict
    assert first.side_conditions > 0 and again.side_conditions == first.side_conditions
    assert discharge(check).side_conditions == first.side_conditions


def test_options_set_the_budget_and_a_session_must_match_it():
    opts = Options(("well-formed",), timeout=3.0, seed=7, cross_check="cvc5", cross_timeout=5.0)
    assert opts.budget == Budget(3000, 7, second_solver="cvc5", second_timeout_ms=5000)
    with pytest.raises(ValueError):
        verify(ALGO1, Options(("well-formed",)), Session(Budget(seed=1)))
    session = Session(Options().budget)
    assert verify(ALGO1, Options(("well-formed",), jobs=1), session)
    assert session.proven


def test_the_online_softmax_status_a_pool_worker_found_is_kept_once():
    """`prover._solve` proves the lemma's parts in its pool and hands the answer to the session."""
    s = Session()
    assert s.softmax_known() is None
    assert s.softmax_status({"step": True}) == {"step": True} == s.softmax_known()
    assert s.softmax_status({"step": False}) == {"step": True}      # the first answer stays
