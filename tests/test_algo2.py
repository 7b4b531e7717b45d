"""Algorithm 2: the ring model against numpy, prover verdicts against enumeration, counts, Table I,
and the printed text's defects."""

import pytest
import sympy

from ringproof.model.ring.machine import run
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.ring.bounded import check_sizes
from ringproof.schedules.shape import divisible as sizes
from ringproof.proofs.figures.counting import check_claim, closed, counts
from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.results import DEFAULT_PROPERTIES, Verdict
from ringproof.schedules import algo1
from ringproof.schedules.algo2 import ALGO2, ALGO2_PRINTED, CLAIMS, PRINTED_DEFECTS, variant

SOLVER_PROPS = tuple(p for p in DEFAULT_PROPERTIES if p != "counts")
# Yu & Fujita, Table I, Algo.2 #Cycles, and what this schedule takes (docs/algo2.md explains each gap)
TABLE_I = {(3, 3): (21, 21), (4, 4): (36, 36), (5, 5): (50, 51), (6, 3): (146, 144),
           (6, 6): (73, 73), (15, 5): (1134, 1146), (15, 15): (396, 396)}


# A readable form of the derived cycle count (docs/algo2.md): k = n/m, X per parity of m and k.
READABLE_CYCLES = ("(n**3 + (floor(n/2) + 3)*n**2)/m + (n/m)*(Piecewise(((n/m)*(m-1)*(m-3)/8, "
                   "Eq(Mod(m, 2), 1)), ((n/m)*(m-2)**2/8, Eq(Mod(n/m, 2), 0)), "
                   "((m-2)*((n/m)*(m-2)-2)/8, True)) + (m-1)*floor(floor((n-1)/2)/m))")


@pytest.fixture(scope="module")
def derived():
    """The derived counts, once for the module (a derivation takes seconds; each test compares it)."""
    return counts(ALGO2)


def claim(what, n, m):
    return int(sympy.sympify(CLAIMS[what], locals={"n": n, "m": m}))


@pytest.mark.parametrize("n,m", [(1, 1), (2, 1), (2, 2), (3, 3), (4, 2), (5, 5), (6, 2), (6, 3),
                                 (8, 4), (9, 3), (12, 4), (15, 5)])
def test_ring_model_matches_numpy(n, m, derived):
    r = run(ALGO2, n, m)
    assert r.ok, r.violations
    assert r.max_rel_error <= 1e-9
    assert r.cycles == derived.at(n, m)["cycles"]


def test_phases_2_and_3_are_algorithm_1s_code():
    for name in ("phase2a", "phase2b", "phase3"):
        assert ALGO2.phase(name).step.__module__ == algo1.__name__


@pytest.fixture(scope="module")
def parametric():
    return verify(ALGO2, Options(properties=SOLVER_PROPS, max_n=16))


def test_parametric_verdicts_agree_with_enumeration(parametric):
    enum = check_sizes(ALGO2, 24)
    assert {(r.property, r.phase) for r in parametric} <= set(enum)
    for r in parametric:
        assert r.verdict is not Verdict.REFUTED, (r.property, r.phase, r.reason)
        assert enum[(r.property, r.phase)] is None, (r.property, r.phase)
        if r.verdict is Verdict.UNKNOWN:
            assert "not normalized" in r.reason and "no counterexample with n ≤ 16" in r.reason


def test_every_property_of_every_phase_is_proved_for_all_sizes(parametric):
    bad = [(r.property, r.phase, r.reason) for r in parametric
           if (r.verdict, r.tier) != (Verdict.PROVED, "parametric")]
    assert bad == []


def test_bounded_tier_proves_every_property_up_to_24():
    rs = verify(ALGO2, Options(properties=SOLVER_PROPS, tier="bounded", max_n=24))
    assert rs and all(r.verdict is Verdict.PROVED and r.tier == "bounded" for r in rs)


def test_derived_counts_equal_enumeration_up_to_24(derived):
    for n, m in sizes(24):
        tr = build_trace(ALGO2, n, m)
        ops = {}
        for pt in tr.phases:
            ops[pt.op.value] = ops.get(pt.op.value, 0) + int(pt.active.sum())
        want = derived.at(n, m)
        assert tr.cycles == want["cycles"], (n, m)
        assert ops["MAC"] == want["ops"]["MAC"] == claim("MAC", n, m), (n, m)
        assert ops["EAC"] == want["ops"]["EAC"] and ops["DIV"] == want["ops"]["DIV"], (n, m)


def test_counts_are_proved_closed_forms(derived):
    assert closed(derived.cycles) and "phase1" in derived.hints
    for what in ("MAC", "EAC", "DIV"):      # the paper's per-parity MAC count, shown equal for all n
        assert check_claim(derived.ops[what], CLAIMS[what]) is None, what
    (r,) = verify(ALGO2, Options(properties=("counts",)))
    assert (r.verdict, r.tier) == (Verdict.PROVED, "parametric"), r.reason


def test_readable_cycle_form_matches_the_derived_one(derived):
    for n, m in sizes(60):       # a reading for the docs, compared on samples (not a proof)
        assert derived.at(n, m)["cycles"] == int(sympy.sympify(READABLE_CYCLES, locals={
            "n": n, "m": m})), (n, m)


def test_table_I(derived):
    for (n, m), (_, ours) in TABLE_I.items():
        assert run(ALGO2, n, m).cycles == ours == derived.at(n, m)["cycles"]


# each printed defect alone: (property, phase, n, m) of the smallest counterexample
PRINTED = {"C-mod": ("coverage", "phase1", 2, 1), "assign": ("ring-locality", "phase1", 2, 1),
           "jn-move": ("data-flow", "phase2a", 3, 1), "extra-loop": ("data-flow", "phase2a", 3, 1),
           "no-circle": ("data-flow", "phase2a", 3, 1)}


@pytest.mark.parametrize("defect", PRINTED_DEFECTS)
def test_each_printed_defect_is_refuted(defect):
    rs = verify(variant((defect,)), Options(properties=SOLVER_PROPS, tier="bounded", max_n=8))
    bad = sorted((r for r in rs if r.verdict is Verdict.REFUTED),
                 key=lambda r: (r.counterexample.n, r.counterexample.m))
    r = bad[0]
    assert (r.property, r.phase, r.counterexample.n, r.counterexample.m) == PRINTED[defect]


def test_printed_schedule_fails_on_the_ring():
    assert not run(ALGO2_PRINTED, 6, 3).ok
