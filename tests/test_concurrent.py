"""Concurrent ops (issue 25): a step whose op kind is chosen per iteration (`ite` of steps) proves
for every n, agrees with bounded enumeration and the ring model, and its mutants are refuted with
counterexamples replayed on the model."""

from dataclasses import replace

import pytest

from helpers.examples import load
from helpers.twins import assert_same_check_replays

from ringproof.errors import BadInput
from ringproof.model.ring.machine import run
from ringproof.proofs.options import Options
from ringproof.proofs.figures.counting import counts
from ringproof.proofs.ring.prover import verify
from ringproof.proofs.results import Verdict

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


# ------------------------------------------------------------------ phases that share cycles

def test_a_group_proves_and_its_cycles_are_counted_once():
    S = load("phase_group").SCHEDULE
    assert S.slots == (0, 1, 1, 2)
    results = verify(S)
    verdicts, bad = _verdicts(results)
    assert verdicts == {Verdict.PROVED}, bad
    assert {r.tier for r in results} == {"parametric"}
    verdicts, bad = _verdicts(verify(S, Options(tier="bounded", max_n=8)))
    assert verdicts == {Verdict.PROVED}, bad
    c = counts(S)
    for n, m in ((4, 2), (6, 3)):
        ring = run(S, n, m)
        assert ring.ok, ring.violations
        assert c.at(n, m)["cycles"] == ring.cycles == (2 * n ** 3 + 2 * n ** 2) // m


def test_a_group_lasts_as_its_longest_member_by_enumeration():
    G = load("phase_group")
    short = G.DIVS.derive(bounds={"i": (1, 1)})            # one block of rows: fewer cycles
    S = G.Schedule("short", G.SCHEDULE.problem, (G.EXPS, short), home=G.SCHEDULE.home)
    c = counts(S)
    for n, m in ((4, 2), (6, 3), (4, 4)):
        assert c.at(n, m)["cycles"] == run(S, n, m).cycles == (n // m) * 2 * n


def _early_divs():
    """DIV from ring step n on: in the cycle of the last EAC, on the same PEs, reading a sum made
    in that very cycle."""
    G = load("phase_group")
    early = G.Phase("divs", G.LOOPS, lambda P, ix: G.divs(P, ix, lambda P: P.n), inverse=G._div_at,
                    group="softmax")
    return G.SCHEDULE.derive("early-divs", {"divs": early})


def test_two_phases_of_a_group_on_one_pe_in_one_cycle_are_refuted_and_replay():
    S = _early_divs()
    refuted = [r for r in verify(S) if r.verdict is Verdict.REFUTED]
    assert refuted and all(r.tier == "parametric" for r in refuted)
    kinds = {r.counterexample.check for r in refuted}
    assert any("no write clash with divs" in k for k in kinds), kinds
    assert any(r.property == "data-flow" and r.phase == "divs" for r in refuted), kinds
    for r in refuted:
        assert_same_check_replays(S, r)
    cex = next(r for r in refuted if r.property == "no-conflict").counterexample
    ring = run(S, cex.n, cex.m)
    assert any(v.rule == "no-conflict" for v in ring.violations), ring.violations


def test_the_phases_of_a_group_must_walk_the_same_loops():
    G = load("phase_group")
    other = G.DIVS.derive(bounds={"j": (1, "n")})
    with pytest.raises(BadInput, match="outermost loop's upper bound"):
        G.Schedule("bad", G.SCHEDULE.problem, (G.EXPS, other), home=G.SCHEDULE.home)


# ------------------------------------------------------------------ joint inverse

def test_a_joint_inverse_proves_coverage_across_phases_for_every_n():
    S = load("joint_inverse").SCHEDULE
    results = verify(S)
    verdicts, bad = _verdicts(results)
    assert verdicts == {Verdict.PROVED}, bad
    assert {r.tier for r in results} == {"parametric"}
    assert ("coverage", "-") in {(r.property, r.phase) for r in results}
    verdicts, bad = _verdicts(verify(S, Options(tier="bounded", max_n=8)))
    assert verdicts == {Verdict.PROVED}, bad
    for n, d, m in ((4, 4, 2), (6, 3, 3), (4, 2, 1)):
        assert run(S, n, m, d=d).ok


def test_without_the_joint_inverse_coverage_is_unknown_not_proved():
    from dataclasses import replace as replace_
    S = replace_(load("joint_inverse").SCHEDULE, inverses={})
    cov = verify(S, Options(properties=("coverage",)))
    assert Verdict.UNKNOWN in {r.verdict for r in cov}
    assert Verdict.REFUTED not in {r.verdict for r in cov}


@pytest.mark.parametrize("mutant", ["missing term", "shifted split"])
def test_a_joint_inverse_missing_a_term_is_refuted_and_replays(mutant):
    from dataclasses import replace as replace_
    J = load("joint_inverse")
    if mutant == "missing term":        # rest starts a block late: block 2's terms are done nowhere
        S = J.SCHEDULE.derive("missing", {"rest": dict(bounds={"i": (3, "k")})})
    else:                               # the split names top for a row top does not do
        S = replace_(J.SCHEDULE, name="shifted",
                     inverses={"y": lambda P, key: J.joint(P, key, lambda P: P.m + 1)})
    refuted = [r for r in verify(S) if r.verdict is Verdict.REFUTED]
    assert refuted and all(r.tier == "parametric" for r in refuted)
    assert any(r.counterexample.check.startswith("every term of y done once") for r in refuted)
    for r in refuted:
        assert_same_check_replays(S, r)
    if mutant == "missing term":
        cex = refuted[0].counterexample
        assert not run(S, cex.n, cex.m, d=cex.d).ok


def test_an_operand_made_in_the_same_cycle_by_another_phase_of_the_group_is_not_before():
    """`before` orders the phases of a group by their loop tuples (they share cycles): the same
    tuple is not earlier, the previous one is; the traces give both phases the same cycles."""
    from ringproof.model.ring.trace import build_trace
    from ringproof.proofs.ring.iterations import at, before
    from ringproof.schedules.dsl import At
    from ringproof.schedules.expr import evaluate, var

    S = load("phase_group").SCHEDULE
    here = dict(i=var("i"), j=var("j"), l=var("l"))
    made, read = at(S, At("exps", here)), at(S, At("divs", here))
    earlier = at(S, At("exps", dict(here, j=var("j") - 1)))
    env = dict(i=1, j=3, l=2)
    assert evaluate(before(made, read), env) is False
    assert evaluate(before(read, made), env) is False
    assert evaluate(before(earlier, read), env) is True
    tr = build_trace(S, 4, 2)
    exps, divs = tr.phase("exps"), tr.phase("divs")
    assert (exps.cycle == divs.cycle).all() and exps.start == divs.start


# ------------------------------------------------------------------ EAC and DIV in one cycle

def test_eac_and_div_in_one_cycle_on_different_pes_prove_and_run():
    from ringproof.model.ring.trace import build_trace
    S = load("mixed_ops").SCHEDULE
    results = verify(S)
    verdicts, bad = _verdicts(results)
    assert verdicts == {Verdict.PROVED}, bad
    verdicts, bad = _verdicts(verify(S, Options(tier="bounded", max_n=8)))
    assert verdicts == {Verdict.PROVED}, bad
    tr = build_trace(S, 4, 2)
    eac, dv = tr.phase("mix.EAC"), tr.phase("mix.DIV")
    both = set(eac.cycle[eac.active].tolist()) & set(dv.cycle[dv.active].tolist())
    assert both == set(range(tr.cycles))              # every cycle runs both kinds
    for n, m in ((4, 2), (6, 3), (4, 4)):
        assert run(S, n, m).ok


def test_a_form_on_its_neighbours_pe_is_refuted_as_a_shared_slot_and_replays():
    from ringproof import wrap
    M = load("mixed_ops")

    def step(P, ix):
        choice = M.step(P, ix)
        return M.ite(choice.cond, choice.then, replace(choice.other, pe=wrap(ix.l + 1, P.m)))

    S = M.Schedule("neighbour", M.MIX, (replace(M.PHASE, step=step),), home=M.SCHEDULE.home)
    refuted = [r for r in verify(S) if r.verdict is Verdict.REFUTED]
    assert any(r.property == "no-conflict" and "with mix.DIV" in r.counterexample.check for r in refuted), \
        [(r.property, r.phase, r.counterexample.check) for r in refuted]
    for r in refuted:
        assert_same_check_replays(S, r)
    cex = next(r for r in refuted if r.property == "no-conflict").counterexample
    assert any(v.rule == "no-conflict" for v in run(S, cex.n, cex.m).violations)
