"""Barrier modes: every witness passes the checker in its mode, runs breaking a mode's barriers are
rejected by both checkers, and the barrier-free lower bound never exceeds a solver-proven minimum."""

from dataclasses import replace

import pytest

from ringproof.model.bitlevel import check_run
from ringproof.model.bitlevel.types import BARRIERS
from ringproof.model.bitlevel.problem import BitProblem
from ringproof.proofs.search.cnf import Encoding, EncodingModes
from ringproof.proofs.search.minimum import _Splitter, search
from ringproof.proofs.search.sat_check import sat_check_run
from helpers.bitlevel_simple import simple_run

SMALL = [("plain", 2, 2), ("masked", 2, 2), ("symmetric", 2, 2)]
_RESULTS: dict = {}


def _search(variant, n, m, barriers):
    key = (variant, n, m, barriers)
    if key not in _RESULTS:
        _RESULTS[key] = search(variant, n, m, barriers=barriers, timeout=300)
    return _RESULTS[key]


@pytest.fixture(scope="module")
def masked3_free():
    return _search("masked", 3, 3, "none")


@pytest.mark.parametrize("barriers", ["pe", "none"])
def test_masked_3_below_the_global_minimum_in_weaker_modes(barriers):
    """T=16 lies below the global bound 17: the witness comes from the phase-band stage (a
    restriction) and must be a run of the mode, which breaks global barriers."""
    r = _search("masked", 3, 3, barriers)
    assert r.proven and r.min_cycles == 16 and r.unsat_by == "slot counting"
    assert check_run(r.schedule) == [] and sat_check_run(r.schedule).valid is True
    assert any("barrier violated" in p for p in check_run(replace(r.schedule, barriers="global")))


@pytest.mark.parametrize("barriers", ["pe", "none"])
def test_phase_bands_only_narrow_the_operand_windows(barriers):
    """A band restricts runs (witness only): every op's window with it lies inside its window
    without it and inside its phase's cycles."""
    prob = BitProblem("masked", 4, 4)
    band = _Splitter(prob, "kissat404", None, None, barriers)._band(25)
    assert band is not None and _Splitter(prob, "kissat404", None, None, barriers)._band(26) is None
    wide, narrow = (Encoding(prob, 25, EncodingModes(barriers=barriers)).win,
                    Encoding(prob, 25, EncodingModes(barriers=barriers, band=band)).win)
    for s, (lo, hi), (blo, bhi) in zip(prob.ops, wide, narrow):
        assert lo <= blo <= bhi <= hi and band[s.phase][0] <= blo and bhi <= band[s.phase][1]


@pytest.mark.slow
def test_masked_4_without_barriers_runs_in_25_cycles():
    r = search("masked", 4, 4, barriers="none", timeout=600)
    assert r.proven and r.min_cycles == 25 and check_run(r.schedule) == []


@pytest.mark.parametrize("barriers", BARRIERS)
@pytest.mark.parametrize("variant,n,m", SMALL)
def test_every_witness_passes_the_checker_in_its_mode(variant, n, m, barriers):
    r = _search(variant, n, m, barriers)
    assert r.proven and r.barriers == barriers and r.schedule.barriers == barriers
    assert check_run(r.schedule) == [] and sat_check_run(r.schedule).valid is True
    assert r.min_cycles >= r.lower_bound  # the lemma bound of the mode never exceeds the minimum


@pytest.mark.parametrize("variant,n,m", SMALL)
def test_fewer_barriers_never_cost_cycles(variant, n, m):
    minima = [_search(variant, n, m, b).min_cycles for b in BARRIERS]
    assert minima[0] >= minima[1] >= minima[2]  # every global run is a pe run, every pe run a free one


def test_masked_3_runs_in_16_cycles_without_barriers(masked3_free):
    r = masked3_free
    assert r.proven and r.min_cycles == 16 and check_run(r.schedule) == []
    # 16 is below global barriers' proven minimum 17: the same run breaks them, for both checkers
    under_global = replace(r.schedule, barriers="global")
    assert any("barrier violated" in p for p in check_run(under_global))
    assert sat_check_run(under_global).valid is False


def test_per_pe_barrier_violation_is_rejected():
    run = simple_run("masked", 2, 2)  # row i runs on PE i: an EAC of row 0 moved before PE 0's MAC1s
    eac = next(o for o in run.ops if o.kind == "EAC" and o.p == 0)
    first = min(o.t for o in run.ops if o.kind == "MAC1" and o.p == 0)
    swapped = next(o for o in run.ops if o.kind == "MAC1" and o.p == 0 and o.t == first)
    swap = {eac: replace(eac, t=first), swapped: replace(swapped, t=eac.t)}
    bad = replace(run, ops=tuple(swap.get(o, o) for o in run.ops), barriers="pe")
    assert any("barrier violated on PE 0" in p for p in check_run(bad))
    assert sat_check_run(bad).valid is False
    assert not any("barrier" in p for p in check_run(replace(bad, barriers="none")))


def test_unknown_barrier_mode_is_reported():
    assert check_run(replace(simple_run("plain", 2, 2), barriers="sometimes")) == ["unknown barrier mode 'sometimes'"]
