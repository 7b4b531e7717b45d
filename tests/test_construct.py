"""Runs at the lower bound from proofs/search/construct.py, replayed by the checker and SAT."""

from __future__ import annotations

import json
import pathlib

import pytest

from ringproof.errors import BadInput
from ringproof.model.bitlevel import Run
from ringproof.model.bitlevel.check import check_run
from ringproof.model.bitlevel.types import SatVerdict
from ringproof.proofs.search.bound import bound_value
from ringproof.proofs.search.construct import (at_bound, column_placement, masked_run, phase2, symmetric_phase1,
                                               symmetric_run)
from ringproof.proofs.search.sat_check import sat_check_run

WITNESSES = pathlib.Path(__file__).resolve().parent.parent / "docs" / "witnesses"


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_a_masked_run_at_the_bound_is_built_and_both_replays_accept_it(n):
    verdict, run = at_bound(n, solver="cadical195")
    assert verdict == SatVerdict.SAT
    assert run.T == bound_value("masked", n, n)
    assert check_run(run) == []
    assert sat_check_run(run, solver="cadical195").valid is True


def test_without_e_sends_phase_2_needs_2n_minus_1_cycles_at_n_5():
    """Each DIV on its EAC's PE (what the bridge gives a DSL schedule): 2n − 2 cycles refuted, 2n − 1 met."""
    assert phase2(5, 8, e_sends=False, solver="cadical195")[0] == SatVerdict.UNSAT
    verdict, w1_pe, ops, sends = phase2(5, 9, e_sends=False, solver="cadical195")
    assert verdict == SatVerdict.SAT and not any(x[0] == "e" for _, _, x in sends)
    where = {(kind, a, b): p for _, p, kind, a, b in ops}
    assert all(where[("DIV", a, b)] == where[("EAC", a, b)] for kind, a, b in where if kind == "DIV")
    assert check_run(masked_run(5, w1_pe, ops, sends, 9)) == []


def test_a_run_built_around_a_broken_phase_2_is_rejected():
    verdict, w1_pe, ops, sends = phase2(3, 5, solver="cadical195")
    late = [(t + 1 if kind == "DIV" and a == 2 else t, p, kind, a, b) for t, p, kind, a, b in ops]
    assert check_run(masked_run(3, w1_pe, ops, sends, 5)) == []
    assert check_run(masked_run(3, w1_pe, late, sends, 5)) != []        # a DIV of row 3 moved past phase 2


def test_the_waiting_chains_need_a_chain_ending_on_every_column():
    verdict, w1_pe, ops, sends = phase2(3, 5, solver="cadical195")
    crowded = {ab: 0 for ab in w1_pe}
    with pytest.raises(BadInput):
        masked_run(3, crowded, ops, sends, 5)
    with pytest.raises(BadInput):
        at_bound(0)


@pytest.mark.parametrize("path", sorted(WITNESSES.glob("masked-*.json")), ids=lambda p: p.stem)
def test_the_stored_witnesses_are_valid_runs_at_the_bound(path):
    doc = json.loads(path.read_text())
    n = doc["n"]
    run = Run.from_json(doc, "masked", n, n, n, doc["T"], column_placement(n))
    assert doc["T"] == bound_value("masked", n, n)
    assert check_run(run) == []


SIZES = [(n, m) for n in range(1, 9) for m in range(1, n + 1) if n % m == 0]


@pytest.mark.parametrize("n,m", SIZES)
def test_the_symmetric_construction_is_a_valid_run_at_the_bound(n, m):
    run = symmetric_run(n, m)
    assert run.T == bound_value("symmetric", n, m)
    assert check_run(run) == []


@pytest.mark.parametrize("n,m", [(4, 4), (6, 3), (8, 8)])
def test_the_sat_check_accepts_the_symmetric_construction(n, m):
    assert sat_check_run(symmetric_run(n, m), solver="cadical195").valid is True


def test_the_symmetric_phase_1_fills_every_slot_and_a_swapped_pair_of_slots_is_rejected():
    ops, sends, L1 = symmetric_phase1(6, 3)
    assert L1 == 6 * 6 * 7 // (2 * 3) and sorted((o.t, o.p) for o in ops) == [(t, p) for t in range(L1) for p in range(3)]
    run = symmetric_run(6, 3)
    first = [o for o in run.ops if o.kind == "MAC1" and o.t == 0][0]
    later = [o for o in run.ops if o.kind == "MAC1" and o.t == 1 and o.p == first.p][0]
    swapped = tuple(o.__class__(later.t, o.p, o.kind, o.i, o.j, o.l) if o == first else
                    o.__class__(first.t, o.p, o.kind, o.i, o.j, o.l) if o == later else o for o in run.ops)
    assert check_run(Run(run.variant, 6, 3, 6, run.T, swapped, run.sends, run.placement)) != []
