"""The independent checker and the SAT bounded check accept valid runs and reject broken ones."""

from dataclasses import replace

import pytest

from ringproof.model.bitlevel import BitOp, BitSend, Run, check_run
from ringproof.proofs.search.sat_check import sat_check_run
from helpers.bitlevel_simple import simple_run

VARIANTS = ["plain", "symmetric", "masked"]


def _both_reject(run: Run, needle: str) -> None:
    problems = check_run(run)
    assert any(needle in p for p in problems), problems
    assert sat_check_run(run).valid is False


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("n,m", [(2, 2), (3, 2), (3, 3), (4, 3)])
def test_simple_runs_are_valid(variant, n, m):
    run = simple_run(variant, n, m)
    assert check_run(run) == []
    assert sat_check_run(run).valid is True


def test_column_placement_is_honoured():
    n = 3
    cols = {(a, i, l): l % n for a in "qkv" for i in range(n) for l in range(n)}
    run = simple_run("plain", n, n, placement=cols)
    assert check_run(run) == [] and sat_check_run(run).valid is True
    # the same ops and sends under the default placement need data that is not there
    assert check_run(replace(run, placement=None)) != []


@pytest.fixture
def base() -> Run:
    return simple_run("plain", 2, 3, d=2)


def _free_slot(run: Run, t_max: int | None = None) -> tuple[int, int]:
    used = {(o.p, o.t) for o in run.ops}
    return next((p, t) for t in range(t_max or run.T) for p in range(run.m) if (p, t) not in used)


def test_operand_missing(base):
    gone = next(s for s in base.sends if s.datum == ("k", 1, 0))
    _both_reject(replace(base, sends=tuple(s for s in base.sends if s != gone)), "operand ('k', 1, 0)")


def test_two_ops_on_one_slot(base):
    a, b = base.ops[0], base.ops[1]
    moved = replace(a, p=b.p, t=b.t) if (a.p, a.t) != (b.p, b.t) else a
    _both_reject(replace(base, ops=(moved,) + base.ops[1:]), "runs 2 ops")


def test_link_over_capacity(base):
    s = base.sends[0]
    extra = BitSend(s.t, s.p, ("q", s.p, 1))  # q_p[1] starts on PE p, so only the capacity is broken
    _both_reject(replace(base, sends=base.sends + (extra,)), "carries 2")


def test_forwarded_in_arrival_cycle(base):
    s = next(x for x in base.sends if x.datum == ("k", 0, 0) and x.p == 0)
    relay = next(x for x in base.sends if x.datum == s.datum and x.p == 1)
    early = replace(relay, t=s.t)  # relay the datum in the cycle it travels over the first hop
    bad = replace(base, sends=tuple(early if x == relay else x for x in base.sends))
    _both_reject(bad, "is not on PE 1 at the start of cycle")


def test_barrier_violated():
    run = simple_run("masked", 2, 2)
    last_mac1 = max(o.t for o in run.ops if o.kind == "MAC1")
    eac = next(o for o in run.ops if o.kind == "EAC")
    p, t = _free_slot(run, last_mac1)
    bad = replace(run, ops=tuple(replace(o, p=p, t=t) if o == eac else o for o in run.ops))
    _both_reject(bad, "barrier violated")


@pytest.mark.parametrize("variant,datum", [("plain", ("w", 0, 1)), ("plain", ("e", 1, 0)), ("plain", ("w1", 0, 1)),
                                           ("symmetric", ("w1", 0, 1))])
def test_send_of_a_datum_the_pe_does_not_hold(variant, datum):
    """An extra send, on a free link slot, of a result PE 0 never holds at that cycle (the per-cycle
    encoding had no send variable before a datum's first production and accepted it)."""
    run = simple_run(variant, 2, 2)
    used = {(s.p, s.t) for s in run.sends}
    t = next(t for t in range(run.T) if (0, t) not in used)
    _both_reject(replace(run, sends=run.sends + (BitSend(t, 0, datum),)), "is not on PE 0")


@pytest.mark.parametrize("variant", VARIANTS)
def test_compact_and_per_cycle_encodings_agree_on_a_valid_run(variant):
    run = simple_run(variant, 3, 2)
    compact, full = sat_check_run(run), sat_check_run(run, compact=False)
    assert compact.valid is True and full.valid is True
    assert compact.variables < full.variables


def test_op_missing(base):
    _both_reject(replace(base, ops=base.ops[1:]), "missing")


def test_op_duplicated(base):
    p, t = _free_slot(base)
    _both_reject(replace(base, ops=base.ops + (replace(base.ops[-1], p=p, t=t),)), "executed 2 times")


def test_partial_sum_on_wrong_pe():
    run = simple_run("plain", 2, 2)  # every input is gathered on every PE first, so operands stay valid
    second = sorted((o for o in run.ops if o.kind == "MAC1" and (o.i, o.j) == (0, 0)), key=lambda o: o.t)[1]
    other = next(o for o in run.ops if o.t == second.t and o.p != second.p)
    swap = {second: replace(second, p=other.p), other: replace(other, p=second.p)}
    _both_reject(replace(run, ops=tuple(swap.get(o, o) for o in run.ops)), "partial sum ('w1', 0, 0) is on PE 0")


def test_structural_errors_are_reported():
    run = simple_run("plain", 2, 2)
    bad = replace(run, ops=run.ops + (BitOp(0, 5, "MAC2", 0, 0, 0),))
    assert any("unknown kind" in p for p in check_run(bad))
    assert any("not a datum" in p for p in check_run(replace(run, sends=(BitSend(0, 0, ("z", 0)),))))
