"""The optimal-schedule search: witnesses are valid, minima agree across solvers and formulations."""

import functools

import pytest

from ringproof.model.bitlevel import check_run
from ringproof.proofs.search.sat_check import sat_check_run
from ringproof.proofs.search.minimum import search
from ringproof.proofs.search.options import SearchOptions
from ringproof.proofs.search.cnf import Encoding, EncodingModes
from ringproof.model.bitlevel.problem import BitProblem
from ringproof.proofs.search.portfolio import solve
from ringproof.model.bitlevel.types import SatVerdict
from ringproof.errors import BadInput

TINY = [("plain", 2, 2), ("symmetric", 2, 2), ("masked", 2, 2), ("masked", 3, 3), ("symmetric", 3, 3),
        ("masked", 3, 2)]


@functools.cache
def minimum(variant, n, m, lemmas=True):
    """The search with its default options (and `lemmas`), run once per module: several tests check
    their own way of finding the minimum, or its witness, against it."""
    return search(variant, n, m, timeout=60, lemmas=lemmas)


@pytest.mark.parametrize("variant,n,m", TINY)
def test_witness_is_valid_for_both_checkers(variant, n, m):
    r = minimum(variant, n, m, lemmas=False)
    assert r.proven and r.schedule.T == r.min_cycles == r.unsat_below + 1
    assert r.min_cycles >= r.lower_bound  # the lemmas never exceed a solver-proven minimum
    assert check_run(r.schedule) == []
    assert sat_check_run(r.schedule).valid is True


@pytest.mark.parametrize("variant,n,m", TINY + [("plain", 3, 3), ("masked", 4, 2)])
def test_lemma_start_skips_no_satisfiable_T(variant, n, m):
    """Starting at the lemma bound finds the minimum the solver alone proves from slot counting."""
    solver_only = minimum(variant, n, m, lemmas=False)
    r = minimum(variant, n, m)
    assert r.proven and r.min_cycles == solver_only.min_cycles
    assert r.lemma_below == r.lower_bound - 1 <= r.unsat_below
    assert all(a.T > r.lemma_below for a in r.attempts)


@pytest.mark.parametrize("variant,n,m", TINY[:4])
def test_minimum_agrees_with_z3_sat_core(variant, n, m):
    assert search(variant, n, m, solver="z3", timeout=60).min_cycles == minimum(variant, n, m).min_cycles


@pytest.mark.parametrize("variant,n,m", TINY)
def test_minimum_agrees_with_barrier_variable_formulation(variant, n, m):
    """Second formulation: no phase splitting, no busy-slot clauses, barriers as variables, CaDiCaL."""
    best = minimum(variant, n, m).min_cycles
    prob = BitProblem(variant, n, m)
    for T, expect in ((best, SatVerdict.SAT), (best - 1, SatVerdict.UNSAT)):
        enc = Encoding(prob, T)
        verdict = SatVerdict.UNSAT if enc.cnf.conflict else solve(enc.cnf.clauses, enc.cnf.nv, "cadical195")[0]
        assert verdict is expect, (T, verdict)


def test_known_minima_of_the_paper():
    assert minimum("masked", 3, 3).min_cycles == 17  # Table II: 17, 16 proven unachievable
    assert minimum("symmetric", 3, 3).min_cycles == 21  # Table I


def test_custom_placement_by_columns():
    n = 2
    cols = {(a, i, l): l % n for a in "qkv" for i in range(n) for l in range(n)}
    r = search("masked", n, n, placement=cols)
    assert r.proven and r.schedule.placement == cols and check_run(r.schedule) == []


def test_timeout_never_claims_a_minimum():
    r = search("masked", 4, 4, timeout=0.01)
    assert not r.proven and r.min_cycles is None
    assert r.unsat_below < r.lower_bound + 1


def test_options_record_and_keywords_are_one_call():
    """`search`'s options as a record and by name (the documented call) give the same search; a name
    that is no option is refused, and nothing is taken positionally past d."""
    by_record = search("plain", 2, 2, options=SearchOptions(max_T=5, timeout=60))
    by_name = search("plain", 2, 2, max_T=5, timeout=60)
    assert not by_record.proven and by_record.reason == by_name.reason == "no schedule up to max_T=5"
    assert search("plain", 2, 2, options=SearchOptions(max_T=5), max_T=None).proven  # a name overrides the record
    with pytest.raises(TypeError, match="lemma"):
        search("masked", 2, 2, lemma=False)
    with pytest.raises(TypeError):
        search("masked", 2, 2, None, 20)


@pytest.mark.parametrize("args", [("cubic", 2, 2), ("plain", 0, 2), ("plain", 2, 0)])
def test_bad_sizes_raise_bad_input(args):
    with pytest.raises(BadInput):
        search(*args)


@pytest.mark.slow
def test_masked_4_matches_table_2():
    r = search("masked", 4, 4, timeout=600)
    assert r.min_cycles == 26 and r.unsat_below == 25


def test_staged_path_finds_a_valid_witness():
    """Skip the quick full call so the phase-1 relaxation and the pinned CNF do the work."""
    from ringproof.proofs.search.minimum import _Splitter

    prob = BitProblem("masked", 3, 3)
    splitter = _Splitter(prob, "kissat404", None, None)
    splitter.QUICK = 0
    verdict, run = splitter.decide(17, (6, 5, 6))
    assert verdict is SatVerdict.SAT and check_run(run) == []
    assert [a.stage for a in splitter.attempts] == ["full", "phase-1 relaxation", "phase 1 pinned"]
    assert splitter.decide(17, (5, 6, 6))[0] is SatVerdict.UNSAT  # phase 1 cannot fit in 5 cycles


@pytest.mark.parametrize("variant,n,m", [("plain", 2, 2), ("masked", 3, 3), ("masked", 3, 2), ("symmetric", 3, 3)])
def test_feature_symmetry_breaking_keeps_the_minimum(variant, n, m, monkeypatch):
    """The solver-only minimum is the same with the feature orderings switched off."""
    broken = minimum(variant, n, m, lemmas=False).min_cycles
    monkeypatch.setattr(Encoding, "_break_feature_symmetry", lambda self: None)
    assert search(variant, n, m, lemmas=False).min_cycles == broken


def test_a_failed_pin_is_forbidden_and_replaced(monkeypatch):
    """When a pinned CNF fails, the relaxation is asked for a different phase-1 placement."""
    from ringproof.proofs.search.minimum import _Splitter

    splitter = _Splitter(BitProblem("masked", 3, 3), "kissat404", None, None)  # Kissat: one placement a call
    splitter.QUICK = 0
    pinned = splitter._pinned
    tried = []

    def first_pin_fails(T, split, pins, budget, rotation, stage):
        tried.append(pins)
        if len(tried) == 1:
            return SatVerdict.UNSAT, None
        return pinned(T, split, pins, budget, rotation, stage)

    monkeypatch.setattr(splitter, "_pinned", first_pin_fails)
    verdict, run = splitter.decide(17, (6, 5, 6))
    assert verdict is SatVerdict.SAT and check_run(run) == []
    (v0, first), (v1, second) = splitter.pins[(6, None)]
    assert v0 is v1 is SatVerdict.SAT and first != second
    assert tried == [[first], [second]]


def test_placements_raced_in_pairs():
    """CaDiCaL returns RACE distinct placements in one relaxation call; they are raced together and
    the winner's witness passes the checker."""
    from ringproof.proofs.search.minimum import _Splitter

    splitter = _Splitter(BitProblem("masked", 3, 3), "cadical195", None, None)
    splitter.QUICK = 0
    verdict, run = splitter.decide(17, (6, 5, 6))
    assert verdict is SatVerdict.SAT and check_run(run) == []
    relax = [a for a in splitter.attempts if a.stage == "phase-1 relaxation"]
    assert len(relax) == 1 and len(splitter.pins[(6, None)]) == splitter.RACE == 2
    (_, a), (_, b) = splitter.pins[(6, None)]
    assert a != b and any("2 raced" in x.stage for x in splitter.attempts)


def test_first_witness_skips_unsat_cnfs():
    from ringproof.proofs.search.portfolio import first_witness

    unsat, sat = [[1], [-1]], [[1, 2], [-1]]
    assert first_witness([unsat, sat], "cadical195", 30)[:2] == (1, SatVerdict.SAT)
    assert first_witness([unsat, unsat], "cadical195", 30)[:2] == (None, SatVerdict.UNSAT)


@pytest.mark.parametrize("split", [(6, 5, 6), (6, 6, 6)])
def test_phase_3_feature_ordering_keeps_pinned_verdicts(split, monkeypatch):
    """The v-feature ordering, added to pinned CNFs only, leaves their verdict unchanged."""
    prob = BitProblem("masked", 3, 3)
    relax = Encoding(prob.phase_one(), 6, EncodingModes(split=(6, 0, 0)))
    pin = relax.decode(solve(relax.cnf.clauses, relax.cnf.nv, "cadical195")[1])[0]

    def verdict():
        enc = Encoding(prob, sum(split), EncodingModes(split=split, pin=pin))
        return solve(enc.cnf.clauses, enc.cnf.nv, "cadical195")[0], len(enc.cnf.clauses)

    ordered, with_clauses = verdict()
    monkeypatch.setattr(Encoding, "_chain", lambda self, kind: [])
    plain, without_clauses = verdict()
    assert ordered is plain and with_clauses > without_clauses


def test_relaxation_up_to_a_phase_accepts_the_start_of_every_witness():
    """up_to(k) keeps the ops of phases 1..k; the first L1 + .. + Lk cycles of a witness are its run
    (phase 1 pinned there, the relaxation stays SAT), and it refutes what the whole problem refutes."""
    prob = BitProblem("masked", 3, 3)
    assert [s.key for s in prob.up_to(1).ops] == [s.key for s in prob.phase_one().ops]
    assert len(prob.up_to(3).ops) == len(prob.ops) > len(prob.up_to(2).ops) > len(prob.up_to(1).ops)
    L1, L2, L3 = prob.phase_minimum()
    whole = Encoding(prob, L1 + L2 + L3, EncodingModes(split=(L1, L2, L3)))
    place = whole.decode(solve(whole.cnf.clauses, whole.cnf.nv, "cadical195")[1])[0]
    pin = {k: pt for k, pt in place.items() if k[0] == "MAC1"}
    two = Encoding(prob.up_to(2), L1 + L2, EncodingModes(split=(L1, L2, 0), pin=pin))
    assert solve(two.cnf.clauses, two.cnf.nv, "cadical195")[0] is SatVerdict.SAT
    short = Encoding(prob.up_to(2), L1 + L2 - 2, EncodingModes(split=(L1, L2 - 2, 0)))  # fewer slots than phase-2 ops
    assert short.cnf.conflict and solve(short.cnf.clauses, short.cnf.nv, "cadical195")[0] is SatVerdict.UNSAT
