"""Rotation-invariant witness search (proofs/search/rotation.py) and the stage that uses it."""

import pytest

from ringproof.proofs.search.minimum import _Splitter
from ringproof.model.bitlevel import check_run
from ringproof.proofs.search.sat_check import to_run
from ringproof.proofs.search.cnf import Encoding, EncodingModes
from ringproof.model.bitlevel.problem import BitProblem
from ringproof.proofs.search.rotation import rotation_step
from ringproof.proofs.search.portfolio import solve
from ringproof.model.bitlevel.types import SatVerdict


@pytest.mark.parametrize("variant,n,m,step", [("symmetric", 3, 3, 1), ("symmetric", 4, 4, None),
                                              ("symmetric", 6, 6, 2), ("plain", 2, 2, 1),
                                              ("masked", 3, 3, None), ("plain", 4, 2, None)])
def test_rotation_step(variant, n, m, step):
    """Even symmetric n: the half turn fixes w'_{i,i+n/2}, so only a subgroup without it is usable."""
    assert rotation_step(BitProblem(variant, n, m)) == step


def _ops(run, g=0):
    """The run's ops as (t, p, kind, i, j, l) after rotating PEs and indices by g."""
    out = set()
    for o in run.ops:
        i, j = (o.i + g) % run.n, (o.j + g) % run.n
        if run.variant == "symmetric" and o.kind == "MAC1":
            i, j = min(i, j), max(i, j)
        out.add((o.t, (o.p + g) % run.m, o.kind, i, j, o.l))
    return out


@pytest.mark.parametrize("variant,n,split", [("symmetric", 3, (6, 6, 9)), ("plain", 3, (9, 6, 9))])
def test_invariant_witness_is_valid_and_invariant(variant, n, split):
    prob = BitProblem(variant, n, n)
    g = rotation_step(prob)
    enc = Encoding(prob, sum(split), EncodingModes(split=split, rotation=g))
    verdict, model, _ = solve(enc.cnf.clauses, enc.cnf.nv, "cadical195")
    assert verdict is SatVerdict.SAT
    run = to_run(prob, sum(split), *enc.decode(model))
    assert check_run(run) == []
    assert _ops(run, g) == _ops(run)


def test_rotation_stage_finds_a_valid_witness():
    splitter = _Splitter(BitProblem("symmetric", 3, 3), "kissat404", None, None)
    splitter.QUICK = 0
    verdict, run = splitter.decide(21, (6, 6, 9))
    assert verdict is SatVerdict.SAT and check_run(run) == []
    assert [a.stage for a in splitter.attempts] == ["full", "phase-1 relaxation, rotation-invariant",
                                                    "phase 1 pinned, rotation-invariant"]
