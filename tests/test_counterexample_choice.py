"""A refutation names the same iterations whatever Z3 did before: at the smallest failing size each
index is the least the query allows (in the order the counterexample prints them), so a pool
worker's earlier queries, which change the model Z3 returns, do not change the report."""

from __future__ import annotations

import z3

from ringproof.proofs.results import Verdict
from ringproof.proofs.ring.properties import derive
from ringproof.proofs.ring.session import Session
from ringproof.proofs.ring.smt import discharge
from ringproof.schedules.algo2 import ALGO2_PRINTED


def _refuted(checks, session):
    outs = [discharge(c, session) for c in checks]
    return [(o.n, o.m, o.iterations) for o in outs if o.verdict is Verdict.REFUTED]


def test_the_counterexample_does_not_depend_on_earlier_z3_work():
    checks = [c for c in derive(ALGO2_PRINTED) if (c.property, c.phase) == ("data-flow", "phase2a")]
    session = Session()
    first = _refuted(checks, session)
    junk = z3.Ints(" ".join(f"junk{i}" for i in range(100)))     # other terms and a solve between
    s = z3.Solver()
    s.add(z3.Sum(junk) == 7, *[x >= 0 for x in junk])
    assert s.check() == z3.sat
    assert first and _refuted(checks, session) == first

