"""algo2-fast: the ring model against numpy, prover verdicts against enumeration, counts, the
bit-level machine, and its proved distance to Algorithm 2 and to the lower bound."""

import pytest
import z3

from ringproof.model.bitlevel import check_run
from ringproof.model.bitlevel.bridge import to_run
from ringproof.model.ring.machine import run
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.ring.bounded import check_sizes
from ringproof.schedules.shape import divisible as sizes
from ringproof.proofs.figures.counting import check_claim, closed, counts
from ringproof.proofs.ring.prover import Options
from ringproof.proofs.ring.prover import verify as _verify
from ringproof.proofs.ring.session import Session
from ringproof.proofs.results import DEFAULT_PROPERTIES, Verdict
from ringproof.proofs.search import gaps
from ringproof.proofs.search.bound import bound_value
from ringproof.proofs.search.sat_check import sat_check_run
from ringproof.schedules.algo2 import ALGO2
from ringproof.schedules.algo2_fast import ALGO2_FAST, CLAIMS
from ringproof.schedules.algo3 import ALGO3

SOLVER_PROPS = tuple(p for p in DEFAULT_PROPERTIES if p != "counts")


def verify(schedule, opts=Options()):
    """The prover with a session of this test's own: nothing it finds is cached for later tests
    (a report test counts the side conditions its own proofs discharge)."""
    return _verify(schedule, opts, Session(opts.budget))


@pytest.fixture(scope="module")
def derived():
    """The derived counts, once for the module (a derivation takes seconds; each test compares it)."""
    return counts(ALGO2_FAST)


@pytest.mark.parametrize("n,m", [(1, 1), (2, 1), (2, 2), (3, 3), (4, 2), (4, 4), (5, 5), (6, 2), (6, 3),
                                 (6, 6), (8, 4), (9, 3), (12, 4), (15, 5)])
def test_ring_model_matches_numpy(n, m, derived):
    r = run(ALGO2_FAST, n, m)
    assert r.ok, r.violations
    assert r.max_rel_error <= 1e-9
    assert r.cycles == derived.at(n, m)["cycles"]


@pytest.fixture(scope="module")
def parametric():
    return verify(ALGO2_FAST, Options(max_n=16))


def test_every_property_is_proved_for_all_sizes(parametric):
    bad = [(r.property, r.phase, r.reason) for r in parametric
           if (r.verdict, r.tier) != (Verdict.PROVED, "parametric")]
    assert bad == [] and {r.property for r in parametric} == set(DEFAULT_PROPERTIES)


def test_parametric_verdicts_agree_with_enumeration(parametric):
    enum = check_sizes(ALGO2_FAST, 20)
    for r in parametric:
        if r.property != "counts":
            assert enum[(r.property, r.phase)] is None, (r.property, r.phase)


def test_derived_counts_equal_enumeration(derived):
    assert closed(derived.cycles)
    for n, m in sizes(20):
        tr = build_trace(ALGO2_FAST, n, m)
        ops = {}
        for pt in tr.phases:
            ops[pt.op.value] = ops.get(pt.op.value, 0) + int(pt.active.sum())
        want = derived.at(n, m)
        assert tr.cycles == want["cycles"], (n, m)
        assert ops["MAC"] == want["ops"]["MAC"] == n ** 3 + n * n * (n + 1) // 2, (n, m)
        assert ops["EAC"] == ops["DIV"] == want["ops"]["EAC"] == n * n, (n, m)
    for what in ("MAC", "EAC", "DIV"):
        assert check_claim(derived.ops[what], CLAIMS[what]) is None, what


@pytest.mark.parametrize("n,m", [(n, n) for n in range(1, 7)] + [(4, 2), (6, 2), (6, 3), (3, 1)])
def test_valid_on_the_bit_level_machine(n, m):
    """Each pair computed exactly once: valid where Algorithm 2's even-n runs are not."""
    r = to_run(ALGO2_FAST, n, m)
    assert check_run(r) == [] and sat_check_run(r).valid is True


def test_odd_n_meets_the_bound_even_n_is_n_squared_over_2m_above(derived):
    for n, m in sizes(30):
        gap = derived.at(n, m)["cycles"] - bound_value("symmetric", n, m)
        assert gap == (n * n // (2 * m) if n % 2 == 0 else 0), (n, m)


def test_fewer_cycles_than_algorithm_2_exactly_where_stated(derived):
    """gaps.py proves the inequalities for every n; here the closed forms are compared up to n = 40,
    including where they are equal."""
    a, b = counts(ALGO2), derived
    for n, m in sizes(40):
        diff = a.at(n, m)["cycles"] - b.at(n, m)["cycles"]
        assert diff >= 0
        if (n >= 7 and m >= 2) or (m == n >= 5):
            assert diff > 0, (n, m)
    assert {(n, m) for n, m in sizes(12) if m >= 2 and a.at(n, m)["cycles"] == b.at(n, m)["cycles"]} == \
        {(2, 2), (3, 3), (4, 2), (4, 4), (6, 3)}


def test_algorithm_2_gap_at_m_equal_n():
    """The closed form gaps.py proves, against the derived counts (themselves checked by enumeration)."""
    c = counts(ALGO2)
    for n in range(1, 40):
        big_h = (n - 1) // 2
        gap = (n // 2 if n % 2 == 0 else 0) + big_h * (big_h - 1) // 2
        assert c.at(n, n)["cycles"] - bound_value("symmetric", n, n) == gap, n


def test_algorithm_3_gap_at_m_equal_n():
    c = counts(ALGO3)
    for n in range(2, 40):
        K = min(k for k in range(n + 1) if k * (k + 3) >= 2 * n)
        assert c.at(n, n)["cycles"] - bound_value("masked", n, n) == (n if n % 2 == 0 else 0) + n - K


@pytest.fixture(scope="module")
def counted():
    """A session in which each schedule's cycle count is derived once for the gap tests."""
    return Session()


def test_every_gap_statement_is_proved(counted):
    """algo2-fast's and Algorithm 3's statements; algo2-even's and algo3-fast's are proved in their
    own tests (test_algo2_even.py, test_algo3_fast.py)."""
    bad = [g.name for g in gaps.algo2_gaps(counted) + gaps.algo3_gaps(counted) if not g.proved]
    assert bad == []


def test_the_verdicts_do_not_depend_on_what_z3_did_before(counted):
    """In another order, after other Z3 work in the process (a bound's proof, fresh names, a query
    in the shared context): each query runs in a context of its own with its names renumbered."""
    from ringproof.proofs.search.bound import prove_bound

    assert prove_bound("masked").proved
    s = z3.Solver()
    s.add([z3.FreshInt("floor") * z3.FreshInt("ceil") > i for i in range(50)])
    assert s.check() == z3.sat
    bad = [g.name for g in gaps.algo3_gaps(counted) + list(reversed(gaps.algo2_gaps(counted))) if not g.proved]
    assert bad == []


def test_a_query_at_its_resource_limit_is_not_proved(monkeypatch, counted):
    monkeypatch.setattr(gaps, "GAP", 1)
    assert not any(g.proved for g in gaps.algo2_gaps(counted))


@pytest.mark.parametrize("what,claim", [
    ("odd n strictly below the bound", lambda t, zn, zm: t < 0),
    ("the even-n gap off by one", lambda t, zn, zm: z3.If(zn % 2 == 0, 2 * zm * (t - 1) == zn * zn, t == 0)),
])
def test_a_false_gap_is_not_proved(what, claim, counted):
    wrong = gaps._check("wrong", what, gaps.cycles(ALGO2_FAST, counted) - gaps.bound_at_d_n("symmetric"), claim,
                        gaps.EVERY, gaps.BY_RESIDUES)
    assert not wrong.proved


def test_algorithm_2s_gap_off_by_one_is_not_proved(counted):
    wrong = gaps._check("wrong", "", gaps.cycles(ALGO2, counted) - gaps.bound_at_d_n("symmetric"),
                        lambda t, zn, zm: gaps._algo2_gap(t - 1, zn, zm), lambda zn, zm, zk: [zk == 1], gaps.SQUARE)
    assert not wrong.proved


def test_fewer_cycles_from_a_smaller_n_is_not_proved(counted):
    """(3, 3), (4, 2), (4, 4) and (6, 3) are equal: "fewer for every n ≥ 3 with 2 ≤ m | n" is false,
    and so is "fewer for every n ≥ 7" with m = 1 admitted."""
    wrong = gaps._check("wrong", "", gaps.cycles(ALGO2, counted) - gaps.cycles(ALGO2_FAST, counted),
                        lambda t, zn, zm: t > 0,
                        lambda zn, zm, zk: [zn >= 3, zm >= 2], gaps.BY_RESIDUES)
    assert not wrong.proved
    at_m_1 = gaps._check("wrong", "", gaps.cycles(ALGO2, counted) - gaps.cycles(ALGO2_FAST, counted),
                         lambda t, zn, zm: t > 0, lambda zn, zm, zk: [zn >= 7], gaps.BY_RESIDUES)
    assert not at_m_1.proved          # equal at m = 1
