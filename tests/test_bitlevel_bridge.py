"""DSL schedules checked on the bit-level machine: the bridge, both checkers, and `--method bitlevel`."""

import io
import json

import pytest

from ringproof.model.bitlevel import check_run
from ringproof.proofs.search.sat_check import sat_check_run
from ringproof.model.bitlevel.bridge import to_run
from helpers.mutants import REFUTED
from ringproof.proofs.cli import main
from ringproof.schedules.algo1 import ALGO1
from ringproof.schedules.algo2 import ALGO2
from ringproof.schedules.algo3 import ALGO3


@pytest.mark.parametrize("schedule,n,m", [(ALGO1, 6, 3), (ALGO1, 4, 4), (ALGO3, 6, 3), (ALGO3, 5, 5),
                                          (ALGO2, 5, 5), (ALGO2, 3, 1)])
def test_valid_schedules_are_valid_bit_level_runs(schedule, n, m):
    run = to_run(schedule, n, m)
    assert check_run(run) == []
    assert sat_check_run(run).valid is True


def test_even_n_algorithm_2_computes_the_middle_pairs_twice():
    """The paper's accepted d·n/2 redundant MACs break the bit-level rule 'one w' per pair'."""
    run = to_run(ALGO2, 4, 2)
    assert any("executed 2 times" in v for v in check_run(run))
    assert sat_check_run(run).valid is False


@pytest.mark.parametrize("name", ["missing send", "wrong phase order", "off-by-one C"])
def test_broken_schedules_are_invalid_both_ways(name):
    run = to_run(REFUTED[name], 6, 3)
    assert check_run(run) != []
    assert sat_check_run(run).valid is False


def test_a_finished_sum_sent_on_is_a_copy_there():
    """The one documented difference: the index-formula machine moves a sent sum, this one copies."""
    run = to_run(REFUTED["send on the last step"], 6, 3)
    assert check_run(run) == [] and sat_check_run(run).valid is True


def test_cli_method_bitlevel():
    out, err = io.StringIO(), io.StringIO()
    code = main(["algo1", "--tier", "bounded", "--method", "bitlevel", "-n", "6", "-m", "3", "--json"],
                out, err)
    assert code == 0, err.getvalue()
    data = json.loads(out.getvalue())
    assert (data["verdict"], data["sat"], data["checker_violations"], data["cycles"]) == \
        ("proved", "sat", [], 168)
    code = main(["algo2", "--tier", "bounded", "--method", "bitlevel", "-n", "4", "-m", "2"],
                io.StringIO(), io.StringIO())
    assert code == 1
    err = io.StringIO()
    assert main(["algo1", "--method", "bitlevel", "-n", "6", "-m", "3"], io.StringIO(), err) == 64
    assert "--tier bounded" in err.getvalue()


def test_cli_method_bitlevel_names_the_limit_when_sat_gives_no_answer(monkeypatch):
    import ringproof.proofs.search.sat_check as sat_check
    from ringproof.model.bitlevel.types import CheckResult, SatVerdict

    monkeypatch.setattr(sat_check, "sat_check_run",
                        lambda run, timeout=None: CheckResult(SatVerdict.UNKNOWN, timeout, "portfolio"))
    out = io.StringIO()
    code = main(["algo1", "--tier", "bounded", "--method", "bitlevel", "-n", "4", "-m", "2",
                 "--timeout", "3", "--json"], out, io.StringIO())
    data = json.loads(out.getvalue())
    assert code == 2 and data["verdict"] == "unknown"
    assert "raise --timeout" in data["reason"] and "3 s" in data["reason"]


# ---------------------------------------------------------------- the bridge as a statement (docs/optimal.md §5)

BRIDGE_SIZES = [(1, 1), (2, 2), (3, 3), (4, 4), (2, 1), (4, 2), (6, 3)]


def _both_orientations(schedule, n, m):
    """Some pair's w1 accumulated under both names, w1[A, B] and w1[B, A] (A ≠ B): what the ring
    model allows a symmetric problem (they are two data there) and the bit-level machine does not."""
    from ringproof.model.ring.trace import build_trace

    if schedule.problem.name != "symmetric":
        return False
    trace = build_trace(schedule, n, m)
    done = set()
    for pt in trace.phases:
        if pt.step.target is not None and pt.step.target.array.name == "w1":
            for ident in pt.target[pt.active]:
                a, b = trace.layout.name(int(ident)).split("[")[1].rstrip("]").split(",")
                done.add((int(a), int(b)))
    return any((b, a) in done for a, b in done if a != b)


def test_a_ring_valid_schedule_is_a_valid_bit_level_run_unless_it_computes_a_pair_twice():
    """Every registered target at small sizes: valid on the ring model (rules and numerics) ⇒ its run
    is valid on the bit-level machine (checker and SAT), except a symmetric schedule that computes
    both orientations of a pair; a ring-invalid target (the printed ones) is claimed nothing of."""
    from ringproof.model.bitlevel.types import VARIANTS
    from ringproof.model.ring.machine import run
    from ringproof.proofs.cli.targets import registry

    checked = excepted = 0
    for name, schedule in sorted(registry().items()):
        if schedule.problem.name not in VARIANTS:       # the bit-level machine has attention's three only
            continue
        for n, m in BRIDGE_SIZES:
            if not schedule.admits(n, m) or not run(schedule, n, m).ok:     # a side condition's sizes only
                continue
            r = to_run(schedule, n, m)
            twice = _both_orientations(schedule, n, m)
            valid = check_run(r) == []
            assert sat_check_run(r).valid is valid, (name, n, m)
            assert valid is not twice, (name, n, m, check_run(r)[:2])
            checked += 1
            excepted += twice
    assert checked > 40 and excepted > 0
