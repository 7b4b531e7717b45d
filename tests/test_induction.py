"""Counting hints proved by induction, guards read as loop bounds, and claims shown equal by cases."""

from dataclasses import replace

import sympy

from ringproof.model.ring.trace import build_trace
from ringproof.schedules.shape import D_IS_N, divisible as sizes
import pytest

from ringproof.proofs.figures.counting import N, nest_of, check_claim, counts, equal, parameters
from ringproof.proofs.ring.induction import prove_through
from ringproof.proofs.figures.nests import Decider, Unknown, count
from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.results import Verdict
from ringproof.schedules.algo2 import ALGO2, cycles_through
from ringproof.schedules.dsl import Loop, Phase
from ringproof.schedules.expr import div, eq, ite, le, mod


def _with_hint(schedule, hint):
    p = schedule.phases[0]
    loops = (replace(p.loops[0], through=hint),) + p.loops[1:]
    return replace(schedule, phases=(replace(p, loops=loops),) + schedule.phases[1:])


def test_algorithm_2_hint_is_proved():
    assert prove_through(ALGO2.phases[0]) == (True, "")


def test_triangular_nest_hint_is_proved_and_wrong_ones_refuted():
    def tri(through):
        return Phase("tri", (Loop("h", 1, "n", through=through), Loop("j", 1, lambda P, ix: ix.h)),
                     step=lambda P, ix: None)
    assert prove_through(tri(lambda P, H: div(H * (H + 1), 2)))[0] is True
    ok, why = prove_through(tri(lambda P, H: div(H * H, 2)))
    assert ok is False and "base fails" in why
    ok, why = prove_through(tri(lambda P, H: div(H * (H + 1), 2) + ite(le(3, H), 1, 0)))
    assert ok is False and "step fails" in why


def _without_half(P, H):
    """Algorithm 2's hint without taking group n/2's g back out: right for odd n only."""
    r = mod(H, P.m)
    g = ite(eq(r, 0), P.m - 1, ite(le(2 * r, P.m), r, P.m - r) - 1)
    return cycles_through(P, H) + ite(eq(2 * H, P.n), g, 0)


def test_a_refuted_hint_is_not_used():
    bad = _with_hint(ALGO2, _without_half)
    ok, why = prove_through(bad.phases[0])
    assert ok is False and "step fails at n=" in why
    n = int(why.split("n=")[1].split(",")[0])
    assert n % 2 == 0               # the counterexample is an even n, where group n/2 exists
    c = counts(bad)
    assert c.cycles is None and c.hints["phase1"] and "counting hint not proved" in c.why["cycles"]
    (r,) = verify(bad, Options(properties=("counts",)))
    assert r.verdict is Verdict.UNKNOWN and "counting hint not proved" in r.reason


def test_guards_count_exactly_or_not_at_all():
    """A guard folds into the loop bounds it implies (all of them: min of the uppers), by cases;
    one the counter cannot read (it depends on the PE through mod) is not counted."""
    P = parameters(D_IS_N)
    decider = Decider()
    plain = Phase("p", (Loop("i", 1, "k"), Loop("j", 1, "n")), step=lambda P, ix: None)
    loops, env = nest_of(plain, P, True)
    j, n, l = env["j"], P.n, env["l"]
    assert sympy.expand(count(loops, j <= n - 1, decider) - (n - 1) * P.k * P.m) == 0
    assert sympy.expand(count(loops, j <= n + 1, decider) - n * P.k * P.m) == 0   # beyond the range: all
    assert sympy.expand(count(loops, sympy.And(j <= l, j <= n), decider)
                        - P.k * P.m * (P.m + 1) / 2) == 0
    with pytest.raises(Unknown):
        count(loops, sympy.Mod(j, P.m) <= 1, decider)


def test_folded_and_hinted_counts_equal_enumeration():
    c = counts(ALGO2)
    for n, m in sizes(12):
        tr = build_trace(ALGO2, n, m)
        assert tr.phases[0].active.sum() == c.ops["MAC"].subs({N: n}) - n ** 3
        assert tr.cycles == c.at(n, m)["cycles"]


def test_claims_equal_by_residue_cases():
    mac = N ** 2 * (sympy.floor(N / 2) + 1)
    assert equal(mac, sympy.sympify("Piecewise((n*n*(n+1)/2, Eq(Mod(n, 2), 1)), (n*n*(n+2)/2, True))",
                                    locals={"n": N}))
    wrong = "Piecewise((n*n*(n+1)/2, Eq(Mod(n, 2), 1)), (n*n*(n+3)/2, True))"
    assert check_claim(mac, wrong)[:2] == (2, 1)
