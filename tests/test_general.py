"""General shapes: Algorithms 1-3 for n ≠ d (m | n, m | d), proved for all n, d, m and checked
against enumeration; mutants that break only when n ≠ d are refuted; the paper's n = d schedules
refuse or fail n ≠ d instances."""

import io
import json
from dataclasses import replace

import pytest

from helpers.mutants_general import MUTANTS
from ringproof.errors import BadInput
from ringproof.model.ring.machine import run
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.cli.main import main
from ringproof.proofs.ring.bounded import check_sizes
from ringproof.proofs.ring.properties import check_trace
from ringproof.proofs.figures.counting import claim_at
from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.results import Verdict
from ringproof.schedules.algo1 import ALGO1, ALGO1_GENERAL
from ringproof.schedules.algo2 import ALGO2_GENERAL
from ringproof.schedules.algo3 import ALGO3_GENERAL

GENERAL = {s.name: s for s in (ALGO1_GENERAL, ALGO2_GENERAL, ALGO3_GENERAL)}
SHAPES = [(4, 2, 2), (2, 6, 2), (6, 4, 2), (3, 6, 3), (8, 4, 4), (5, 2, 1), (6, 6, 3)]   # (n, d, m)


@pytest.mark.parametrize("name", list(GENERAL))
def test_general_schedules_compute_attention(name):
    s = GENERAL[name]
    for n, d, m in SHAPES:
        r = run(s, n, m, d=d)
        assert r.ok, (n, d, m, r.violations[:1], r.max_rel_error)
        if "cycles" in s.notes["claims"]:
            assert r.cycles == claim_at(s.notes["claims"]["cycles"], n, m, d)
        assert r.ops["MAC"] == claim_at(s.notes["claims"]["MAC"], n, m, d)


def _agrees(schedule, max_n, properties=None):
    """Every parametric verdict (other than counts) agrees with enumeration of n, d ≤ max_n."""
    opts = Options(properties or Options().properties)
    results = verify(schedule, opts)
    enum = check_sizes(schedule, max_n)
    for r in results:
        if r.property == "counts":
            assert r.verdict is not Verdict.REFUTED, r.reason
            continue
        assert r.verdict is Verdict.PROVED, (r.property, r.phase, r.reason)
        assert enum.get((r.property, r.phase)) is None, (r.property, r.phase, enum[(r.property, r.phase)])
    return results


MACS = {"algo1-general": "2*d*n**2", "algo2-general": "d*n*(n + floor(n/2) + 1)",
        "algo3-general": "d*n*(n + 1)"}


@pytest.mark.parametrize("name", list(GENERAL))
def test_general_proved_and_agrees_with_full_enumeration(name):
    """The issue's sweep: every n, d ≤ 16 with m dividing both; the MAC count a closed form."""
    results = _agrees(GENERAL[name], 16)
    counts = next(r for r in results if r.property == "counts")
    assert counts.verdict is Verdict.PROVED and counts.tier == "parametric"
    assert counts.details["ops"]["MAC"] == MACS[name]


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutants_that_break_only_when_n_differs_from_d_are_refuted(name):
    s = MUTANTS[name]
    for n in range(1, 9):                       # n = d: nothing to find
        for m in (x for x in range(1, n + 1) if n % x == 0):
            assert not any(check_trace(build_trace(s, n, m, n)).values()), (n, m)
    refuted = [r for r in verify(s, Options(("well-formed", "coverage"))) if r.verdict is Verdict.REFUTED]
    assert refuted
    for r in refuted:
        cex = r.counterexample
        assert cex.d != cex.n and cex.replay["confirmed"], (r.property, r.phase)
        assert check_trace(build_trace(s, cex.n, cex.m, cex.d), [r.property])[(r.property, r.phase)]
        assert f"-d {cex.d}" in cex.command(s.name)


def test_square_schedules_refuse_n_ne_d():
    with pytest.raises(BadInput, match="written for d = n"):
        run(ALGO1, 4, 2, d=2)
    out, err = io.StringIO(), io.StringIO()
    assert main(["simulate", "algo1", "-n", "4", "-d", "2", "-m", "2"], out, err) == 64
    assert err.getvalue().count("\n") == 1 and "d = n" in err.getvalue()


def test_square_schedule_read_with_d_of_its_own_is_refuted():
    """Algorithm 1 as printed bounds its columns by n: with d a parameter of its own it is wrong."""
    s = replace(ALGO1, name="algo1-any-d", square=False)
    r = next(r for r in verify(s, Options(("well-formed",))) if r.phase == "phase1")
    assert r.verdict is Verdict.REFUTED and r.counterexample.n != r.counterexample.d


def test_simulate_reports_heads_and_shape():
    out, err = io.StringIO(), io.StringIO()
    assert main(["simulate", "algo1-general", "-n", "8", "-d", "4", "-m", "2", "--heads", "3",
                 "--json"], out, err) == 0
    data = json.loads(out.getvalue())
    assert (data["d"], data["heads"]) == (4, 3)
    assert data["cycles"] == 3 * data["cycles_per_head"] == 3 * claim_at("(2*n**2*d + 2*n**2)/m", 8, 2, 4)


def test_each_divisibility_condition_is_shown_necessary():
    """The verifier names what it assumes (m | n, m | d) and shows a failure without each."""
    from ringproof.proofs.ring.conditions import conditions

    got = {c["condition"]: c["counterexample"] for c in conditions(ALGO1_GENERAL)}
    assert set(got) == {"m | n", "m | d"}
    n_cex, d_cex = got["m | n"], got["m | d"]
    assert n_cex.n % n_cex.m != 0 and n_cex.d % n_cex.m == 0
    assert d_cex.d % d_cex.m != 0 and d_cex.n % d_cex.m == 0
    assert [c["condition"] for c in conditions(ALGO1)] == ["m | n"]


@pytest.mark.parametrize("tier,jobs", [("parametric", 2), ("parametric", 1), ("bounded", 2)])
def test_the_conditions_computed_beside_the_proofs_are_the_ones_computed_alone(tier, jobs):
    """`verify_with_conditions` runs them as a task of the checks' pool (or after the bounded tier):
    the same conditions and failures as `conditions` alone, and `verify` computes none."""
    from ringproof.proofs.ring.conditions import conditions
    from ringproof.proofs.ring.prover import verify_with_conditions

    opts = Options(properties=("no-conflict",), tier=tier, jobs=jobs, max_n=4)
    results, needed = verify_with_conditions(ALGO1_GENERAL, opts)
    assert results and all(r.verdict is Verdict.PROVED for r in results)
    alone = conditions(ALGO1_GENERAL)
    assert [(c["condition"], c["counterexample"].to_json()) for c in needed] \
        == [(c["condition"], c["counterexample"].to_json()) for c in alone] and len(alone) == 2
    assert verify_with_conditions(ALGO1_GENERAL, opts, conditions=False)[1] is None
