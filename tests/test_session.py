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

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("ringproof", "proofs", "schedules", "model")      # the installed tree (pyproject's package-dir)
DECORATORS = {"lru_cache", "cache"}                           # functools' memos
CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "WeakKeyDictionary", "WeakValueDictionary"}

# Module-level state that is not a cache of answers, or a memo below the prover (model/ and
# schedules/ cannot see a Session: imports go schedules <- model <- proofs), each with why it stays.
ALLOWED = {
    "proofs/memos.py": {"MEMOS", "lru_cache(...)"},          # the registry of the pure memos below
    "proofs/interrupts.py": {"global _INSTALLED",           # the Ctrl-C handler installed, once per process
                              "global _SECOND_EXITS"},       # `prove`'s own process: a second Ctrl-C ends it at once
    "proofs/threads.py": {"_LIVE", "global _HOOKED"},        # the threads running (paused around a fork)
    "proofs/search/isolated.py": {"_child"},                 # each process's running Z3 child (a resource)
    "schedules/operators.py": {"_CHECKS"},                   # the walkers that check the operator table at import
    "schedules/shape.py": {"_CHECKS"},                       # the same for the parameters
    "model/ring/rules.py": {"_ASSUMED"},                     # the readers written for one value of a ring rule
    "schedules/expr.py": {"_CHOSEN"},                        # the backend per tuple of argument types (a function of the types)
    "model/ring/trace.py": {"_LAST"},                        # `indexed`'s last answer, keyed by the loops and int sizes
}

# The memos of pure functions (`proofs/memos.py: pure`): no solver, budget or schedule enters them,
# and dropping or moving them to the session measured slower (docs/architecture.md).
PURE = {
    "ringproof.proofs.ring.lemmas._digested",
    "ringproof.proofs.figures.counting._claim_form",
    *(f"ringproof.proofs.figures.signs.{f}" for f in ("compiled", "sign", "sign_of_terms")),
    "ringproof.proofs.figures.conjunction._put",
    *(f"ringproof.proofs.figures.nests.{f}" for f in ("_at_most_zero", "_opposite", "_first", "_digit_of",
                                                      "_faulhaber")),
    "ringproof.proofs.figures.memory.sparse.ring_of", "ringproof.proofs.figures.memory.sparse.poly",
    *(f"ringproof.proofs.figures.memory.peak_bound.{f}" for f in (
        "_fixed_pieces", "_fixed_piece", "_pieces_of", "_span", "_text", "_comparisons")),
    *(f"ringproof.proofs.figures.comparisons.{f}" for f in ("atom", "unit_in", "range_of")),
}


def _name(node):
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)


def _empty(value) -> bool:
    """How a cache starts: an empty dict, list or set (or [None], a one-entry memo), or a call of
    a container type without contents (tables of constants are written out)."""
    if isinstance(value, ast.Dict) and not value.keys:
        return True
    if isinstance(value, (ast.List, ast.Set)):
        return all(isinstance(e, ast.Constant) and e.value is None for e in value.elts)
    return isinstance(value, ast.Call) and _name(value) in CONTAINERS and \
        len(value.args) <= (_name(value) == "defaultdict") and not value.keywords


def _caches(path: Path) -> set[str]:
    """The module-level caches of a module: names bound at module level to an empty container, the
    functions memoized by functools (decorated, or wrapped by a call), and module names a function
    rebinds (`global`)."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in tree.body:
        value = getattr(node, "value", None)
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if value is not None and _empty(value):
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out |= {node.name for d in node.decorator_list if _name(d) in DECORATORS}
            out |= {f"global {g}" for s in ast.walk(node) if isinstance(s, ast.Global) for g in s.names}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and _name(node.func) in DECORATORS:
            out.add(f"{_name(node.func)}(...)")
    return out


def _found() -> dict:
    return {str(p.relative_to(ROOT)): names for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))
            if (names := _caches(p))}


def test_no_module_keeps_a_cache_of_its_own():
    """Every cache of the prover's answers is a Session's; what module-level state remains is
    listed in ALLOWED with why, and a memo of a pure function is made by `proofs/memos.py: pure`."""
    assert _found() == ALLOWED


def test_the_scan_sees_each_way_of_keeping_a_cache(tmp_path):
    source = ("import functools\nfrom functools import lru_cache\n_A = {}\n_B: list = [None]\n_C = dict()\n"
              "TABLE = {'x': 1}\n@lru_cache(maxsize=8)\ndef f(x): return x\n@functools.cache\ndef g(x): return x\n"
              "h = functools.lru_cache(maxsize=None)(len)\ndef flag():\n    global _A\n")
    (tmp_path / "m.py").write_text(source)
    assert _caches(tmp_path / "m.py") == {"_A", "_B", "_C", "f", "g", "lru_cache(...)", "global _A"}


def test_the_pure_memos_are_the_documented_ones():
    """`pure` registers each memo it makes; the list is PURE (docs/architecture.md names them)."""
    import importlib

    from ringproof.proofs.memos import MEMOS

    for name in {n.rsplit(".", 1)[0] for n in PURE}:
        importlib.import_module(name)
    assert set(MEMOS) == PURE
    doc = (ROOT / "docs" / "architecture.md").read_text()
    assert all(f"`{m.split('.')[-2]}`" in doc or m.split(".")[-2] in doc for m in PURE)


def test_a_session_is_shared_only_where_it_is_passed():
    own = Session(Budget())
    c = counts(ALGO1, own)
    assert own.counted and counts(ALGO1, own) is c
    assert counts(ALGO1) is not c                    # passed none: a fresh session
    assert Session(Budget()).counted == {}
    assert not hasattr(Session, "for_budget")


def test_a_copy_with_other_claims_shares_its_counts_and_one_with_a_phase_changed_does_not():
    """Counts are kept by what their derivation reads (`counting.counted_from`): a copy with other
    claims is counted once per session, also where derived parameters have the copy wrap its phases
    again (zigzag); a copy with one phase's loop bound changed is counted anew, and
    differs."""
    from dataclasses import replace

    from ringproof.proofs.cli.targets import registry

    session = Session(Budget())
    for S in (ALGO1, registry()["zigzag"]):
        c = counts(S, session)
        assert counts(replace(S, notes={"claims": {"cycles": "n"}}), session) is c, S.name
    c = counts(ALGO1, session)
    p = ALGO1.phases[0]
    shorter = replace(ALGO1, phases=(p.derive(bounds={"h": (1, "k")}),) + ALGO1.phases[1:])
    assert p.loops[0].name == "h" and p.loops[0].hi == "n"
    other = counts(shorter, session)
    assert other is not c and other.cycles != c.cycles
    assert counts(replace(shorter, notes={"claims": {}}), session) is other


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
