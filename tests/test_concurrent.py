"""Concurrent ops (issue 25): a step whose op kind is chosen per iteration (`ite` of steps) proves
for every n, agrees with bounded enumeration and the ring model, and its mutants are refuted with
counterexamples replayed on the model."""

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from helpers.twins import assert_same_check_replays

from ringproof.errors import BadInput
from ringproof.model.ring.machine import run
from ringproof.proofs.options import Options
from ringproof.proofs.ring.counting import counts
from ringproof.proofs.ring.prover import verify
from ringproof.proofs.results import Verdict

EXAMPLES = Path(__file__).parent.parent / "examples"


def load(name):
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(EXAMPLES))


def _verdicts(results):
    return {r.verdict for r in results}, [(r.property, r.phase, r.reason) for r in results
                                          if r.verdict is not Verdict.PROVED]


# ------------------------------------------------------------------ op kind per iteration

def test_a_step_chosen_by_ite_runs_as_one_form_per_branch_in_one_group():
    S = load("concurrent_ops").SCHEDULE
    names = [p.name for p in S.phases]
    assert names == ["phase1", "softmax.EAC", "softmax.DIV", "phase3"]
    assert S.slots == (0, 1, 1, 2)
    assert {p.group for p in S.phases[1:3]} == {"softmax"}


def test_op_per_iteration_proves_at_tier_parametric_and_bounded():
    S = load("concurrent_ops").SCHEDULE
    results = verify(S)
    verdicts, bad = _verdicts(results)
    assert verdicts == {Verdict.PROVED}, bad
    assert {r.tier for r in results} == {"parametric"}
    assert {r.phase for r in results if r.property == "no-conflict"} >= {"softmax.EAC", "softmax.DIV"}
    bounded = verify(S, Options(tier="bounded", max_n=8))
    verdicts, bad = _verdicts(bounded)
    assert verdicts == {Verdict.PROVED}, bad


def test_counts_of_the_forms_are_per_kind_and_the_shared_cycles_counted_once():
    S = load("concurrent_ops").SCHEDULE
    c = counts(S)
    for n, m in ((4, 2), (6, 3), (6, 2)):
        ring = run(S, n, m)
        assert ring.ok, ring.violations
        got = c.at(n, m)
        assert got["cycles"] == ring.cycles == (2 * n ** 3 + 2 * n ** 2) // m
        assert got["ops"]["EAC"] == ring.ops["EAC"] == n * n
        assert got["ops"]["DIV"] == ring.ops["DIV"] == n * n


def _off_by_one():
    C = load("concurrent_ops")
    shifted = replace(C.SOFTMAX, step=lambda P, ix: C.softmax(P, ix, lambda P: P.n + 1))
    phases = [p for p in C.SCHEDULE.phases if p.group is None]
    return C.Schedule("off-by-one", C.SCHEDULE.problem, (phases[0], shifted, phases[1]), home=C.SCHEDULE.home)


def test_an_op_condition_off_by_one_is_refuted_and_replays():
    S = _off_by_one()
    refuted = [r for r in verify(S) if r.verdict is Verdict.REFUTED]
    assert refuted and all(r.tier == "parametric" for r in refuted)
    assert {r.phase for r in refuted} & {"softmax.EAC", "softmax.DIV"}
    for r in refuted:
        assert_same_check_replays(S, r)
    cex = refuted[0].counterexample
    assert not run(S, cex.n, cex.m).ok


def test_the_op_condition_is_never_decided_by_python():
    C = load("concurrent_ops")

    def step(P, ix):
        if ix.j <= P.n:                    # Python's `<=`/`if` on a symbolic value: refused
            return C.softmax(P, ix)
        return C.softmax(P, ix)

    S = C.Schedule("python-if", C.SCHEDULE.problem, (replace(C.SOFTMAX, step=step),), home=C.SCHEDULE.home)
    with pytest.raises(BadInput, match=r"le\(a, b\)"):
        verify(S)
