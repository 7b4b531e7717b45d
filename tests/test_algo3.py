"""Algorithm 3 (masked): ring model vs numpy, verdicts vs enumeration, counts, printed defects."""

import pytest

from helpers.twins import assert_same_check_replays

from ringproof.model.ring.machine import run
from ringproof.model.ring.trace import build_trace
from helpers.mutants_algo3 import REFUTED
from ringproof.proofs.ring.bounded import check_sizes
from ringproof.schedules.shape import divisible as sizes
from ringproof.proofs.figures.counting import N, check_claim, claim_at, counts
from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.results import DEFAULT_PROPERTIES, Verdict
from ringproof.schedules.algo3 import ALGO3, ALGO3_PRINTED, CLAIMS, PRINTED_DEFECTS, variant

SOLVER_PROPS = tuple(p for p in DEFAULT_PROPERTIES if p != "counts")
# Yu & Fujita, Table II, Algo.3 #Cycles
TABLE_II_ALGO3 = {(3, 3): 18, (4, 4): 32, (5, 5): 40, (6, 3): 120, (6, 6): 60, (15, 5): 810,
                  (15, 15): 270, (17, 17): 340}
PHASE2 = ("phase2a", "phase2b")


@pytest.fixture(scope="module")
def session():
    """ALGO3's proofs in this module share one session: its counts are derived once."""
    from ringproof.proofs.ring.session import Session
    return Session(Options().budget)


@pytest.fixture(scope="module")
def parametric(session):
    return verify(ALGO3, Options(tier="parametric", max_n=24, properties=SOLVER_PROPS), session)


@pytest.mark.parametrize("n,m", [(1, 1), (2, 1), (3, 3), (4, 2), (5, 5), (6, 3), (7, 1), (8, 4),
                                 (9, 3), (10, 5), (12, 4), (15, 5)])
def test_ring_model_computes_masked_attention(n, m):
    r = run(ALGO3, n, m)
    assert r.violations == [] and r.max_rel_error <= 1e-9, (r.violations, r.max_rel_error)
    assert r.cycles == claim_at(CLAIMS["cycles"], n, m)
    assert (r.ops["MAC"], r.ops["EAC"], r.ops["DIV"]) == (n * n * (n + 1), n * (n + 1) // 2,
                                                           n * (n + 1) // 2)


def test_every_property_of_every_phase_is_proved_for_all_n(parametric):
    assert {r.phase for r in parametric} == {p.name for p in ALGO3.phases} | {"y"}    # placement of y
    bad = [(r.property, r.phase, r.reason) for r in parametric
           if (r.verdict, r.tier) != (Verdict.PROVED, "parametric")]
    assert bad == []


@pytest.mark.parametrize("schedule", [ALGO3, ALGO3_PRINTED], ids=lambda s: s.name)
def test_verdicts_agree_with_enumeration(schedule, parametric):
    """n ≤ 24 for algo3, n ≤ 16 for the printed text (its refutations replay on the ring model)."""
    max_n = 24 if schedule is ALGO3 else 16
    rs = parametric if schedule is ALGO3 else verify(schedule, Options(max_n=max_n,
                                                                       properties=SOLVER_PROPS))
    enum = check_sizes(schedule, max_n)
    for r in rs:
        hit = enum.get((r.property, r.phase))
        if r.verdict is Verdict.REFUTED:
            assert hit is not None and (r.counterexample.n, r.counterexample.m) == hit[:2]
        else:
            assert hit is None, f"{r.property}/{r.phase}: {r.verdict.value}, but fails at {hit}"


def test_bounded_tier_proves_everything_up_to_16():
    rs = verify(ALGO3, Options(tier="bounded", max_n=16))
    assert {r.property for r in rs} == set(DEFAULT_PROPERTIES)
    assert all(r.verdict is Verdict.PROVED and r.tier == "bounded" for r in rs)


def test_cycle_claim_is_the_derived_closed_form_and_matches_table_II():
    c = counts(ALGO3)
    assert check_claim(c.cycles, CLAIMS["cycles"]) is None
    # guarded phases: |terms| of the equation, valid through the coverage bijection
    assert (c.ops["MAC"], c.ops["EAC"]) == (N**2 * (N + 1), N * (N + 1) / 2)
    for (n, m), cycles in TABLE_II_ALGO3.items():
        assert c.at(n, m)["cycles"] == cycles


def test_op_claims_equal_enumerated_ops_up_to_16():
    for n, m in sizes(16):
        tr = build_trace(ALGO3, n, m)
        got = {}
        for pt in tr.phases:
            got[pt.op.value] = got.get(pt.op.value, 0) + int(pt.active.sum())
        assert got == {op: claim_at(CLAIMS[op], n, m) for op in ("MAC", "EAC", "DIV")}, (n, m)


@pytest.mark.parametrize("n,m", [(3, 3), (4, 2), (6, 3), (17, 17)])
def test_phase_2_utilization_is_n_plus_1_over_2n(n, m):
    tr = build_trace(ALGO3, n, m)
    for name in PHASE2:
        pt = tr.phase(name)
        assert pt.active.sum() * 2 * n == (n + 1) * m * pt.tuples


def test_cli_exit_codes_and_json():
    import io
    import json

    from ringproof.proofs.cli import main
    out = io.StringIO()
    code = main(["algo3", "--property", "coverage", "--max-n", "8", "--json"], out, io.StringIO())
    assert code == 0
    data = json.loads(out.getvalue())
    assert {(r["phase"], r["verdict"]) for r in data["results"]} == {
        ("phase1", "proved"), ("phase2a", "proved"), ("phase2b", "proved"), ("phase3", "proved")}
    assert main(["algo3", "--tier", "bounded", "--max-n", "8"], io.StringIO(), io.StringIO()) == 0
    assert main(["algo3-printed", "--tier", "bounded", "--max-n", "4"], io.StringIO(),
                io.StringIO()) == 1


def test_printed_algorithm_is_refuted():
    rs = verify(ALGO3_PRINTED, Options(max_n=8, properties=("well-formed",)))
    bad = [r for r in rs if r.verdict is Verdict.REFUTED]
    assert bad and all(r.counterexample.replay.get("confirmed") for r in bad)


# each printed defect alone: the property and smallest (n, m) that refute it
PRINTED = {"C-bracket": ("well-formed", "phase1", "parametric", 1, 1),
           "phase2-B-bracket": ("coverage", "phase2a", "bounded", 1, 1),
           "phase2-A-offset": ("coverage", "phase2a", "parametric", 1, 1),
           "sum-before-first": ("ring-locality", "phase2a", "parametric", 3, 1)}


@pytest.mark.parametrize("defect", PRINTED_DEFECTS)
def test_each_printed_defect_alone_is_refuted(defect):
    prop, phase, tier, n, m = PRINTED[defect]
    (r,) = [r for r in verify(variant((defect,)), Options(max_n=8, properties=(prop,)))
            if r.phase == phase]
    got = (r.verdict, r.tier, r.counterexample.n, r.counterexample.m)
    assert got == (Verdict.REFUTED, tier, n, m)


# smallest counterexamples of some mutants, pinned: (tier, n, m)
PINNED = {"mask boundary off by one": ("parametric", 1, 1),
          "phase-2 sum over a masked entry": ("parametric", 2, 1),
          "even-n middle row skipped": ("parametric", 2, 1)}


@pytest.mark.parametrize("name", list(REFUTED))
def test_mutant_is_refuted_and_replays(name):
    schedule, (prop, phase) = REFUTED[name]
    (r,) = [r for r in verify(schedule, Options(max_n=12, properties=(prop,))) if r.phase == phase]
    assert r.verdict is Verdict.REFUTED, r.reason
    cex = r.counterexample
    assert cex.replay.get("confirmed")
    assert_same_check_replays(schedule, r)
    assert not run(schedule, 6, 3).ok
    if name in PINNED:
        assert (r.tier, cex.n, cex.m) == PINNED[name]


def test_op_counts_and_phase_2_utilization_are_closed_forms_through_the_coverage_bijection(session):
    import sympy

    (r,) = verify(ALGO3, Options(properties=("counts",)), session)
    assert (r.verdict, r.tier) == (Verdict.PROVED, "parametric"), r.reason
    assert set(r.details["bijections"]) == {p.name for p in ALGO3.phases}
    util = sympy.sympify(r.details["phase_utilization"]["phase2a"], locals={"n": N})
    assert sympy.simplify(util - (N + 1) / (2 * N)) == 0


def test_counts_are_not_proved_when_coverage_fails():
    from ringproof.schedules.algo3 import variant, PRINTED_DEFECTS
    (r,) = verify(variant(PRINTED_DEFECTS[:1]), Options(properties=("counts",), max_n=8))
    assert r.verdict is not Verdict.PROVED
