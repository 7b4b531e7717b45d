"""Block and chunk layouts (issue 25): the block-radix normalization agrees with enumeration, and the
contiguous (Ring Attention) and zigzag schedules of examples/ prove, their mutants refuted and
replayed."""

import itertools

import pytest
import sympy
import z3

from helpers.examples import EXAMPLES, load
from helpers.twins import assert_same_check_replays

from ringproof.proofs.ring.iterations import new_var
from ringproof.proofs.ring.normalize import PARAMS, Ctx
from ringproof.proofs.options import Options
from ringproof.proofs.ring.prover import verify
from ringproof.proofs.results import Verdict
from ringproof.schedules.expr import div, ite, lt, mod, var

# ------------------------------------------------------------------ normalization vs enumeration

FORMULAS = {   # name: (formula of l ∈ [1, m], i ∈ [1, k], j ∈ [1, n], and its Python value)
    "row": (lambda l, i, j, P: (l - 1) * P.k + i, lambda l, i, j, m, k: (l - 1) * k + i),
    "owner": (lambda l, i, j, P: div((l - 1) * P.k + i - 1, P.k) + 1, lambda l, i, j, m, k: l),
    "offset": (lambda l, i, j, P: mod(j - 1, P.k), lambda l, i, j, m, k: (j - 1) % k),
    "block": (lambda l, i, j, P: div(j - 1, P.k), lambda l, i, j, m, k: (j - 1) // k),
    "rotate": (lambda l, i, j, P: mod(j - 1 + (l - 1) * P.k, P.n),
               lambda l, i, j, m, k: (j - 1 + (l - 1) * k) % (m * k)),
    "rotate-div": (lambda l, i, j, P: div(j - 1 + l * P.k, P.n), lambda l, i, j, m, k: (j - 1 + l * k) // (m * k)),
    "ring-block": (lambda l, i, j, P: mod(l - 2, P.m) * P.k + i, lambda l, i, j, m, k: ((l - 2) % m) * k + i),
    # the block unit k in a condition of the factor (a witness chosen by a condition on k): the
    # product stays in blocks (zigzag-bwd's prev witness)
    "chosen-block": (lambda l, i, j, P: mod(ite(lt(i, P.k), l - 1, l), P.m) * P.k + i,
                     lambda l, i, j, m, k: ((l - 1 if i < k else l) % m) * k + i),
}


@pytest.mark.parametrize("name", list(FORMULAS))
def test_block_radix_normalization_agrees_with_enumeration(name):
    formula, expected = FORMULAS[name]
    ctx = Ctx(block_split=True)
    for v, lo, hi in (("l", 1, PARAMS.m), ("i", 1, PARAMS.k), ("j", 1, PARAMS.n)):
        new_var(ctx, v, lo, hi)
    value = ctx.val(formula(var("l"), var("i"), var("j"), PARAMS))
    assert value.blocks or name in ("owner", "offset", "block", "rotate-div")
    s = z3.Solver()
    s.add(*ctx.assumptions)
    for m, k in ((1, 1), (2, 3), (3, 2), (4, 4)):
        for l, i, j in itertools.product(range(1, m + 1), range(1, k + 1), range(1, m * k + 1)):
            s.push()
            s.add(ctx.m == m, ctx.k == k, z3.Int("l.r") == l - 1, z3.Int("i") == i,
                  z3.Int("j.q") == (j - 1) // k, z3.Int("j.r") == (j - 1) % k)
            assert s.check() == z3.sat
            got = s.model().eval(ctx.int_term(value), model_completion=True).as_long()
            assert got == expected(l, i, j, m, k), (name, m, k, l, i, j)
            s.pop()


def test_block_comparisons_agree_with_enumeration():
    ctx = Ctx(block_split=True)
    for v, lo, hi in (("l", 1, PARAMS.m), ("i", 1, PARAMS.k), ("j", 1, PARAMS.n)):
        new_var(ctx, v, lo, hi)
    cond = ctx.cond(lt((var("l") - 1) * PARAMS.k + var("i"), var("j")))
    s = z3.Solver()
    s.add(*ctx.assumptions)
    for m, k in ((2, 3), (3, 2)):
        for l, i, j in itertools.product(range(1, m + 1), range(1, k + 1), range(1, m * k + 1)):
            s.push()
            s.add(ctx.m == m, ctx.k == k, z3.Int("l.r") == l - 1, z3.Int("i") == i,
                  z3.Int("j.q") == (j - 1) // k, z3.Int("j.r") == (j - 1) % k)
            assert s.check() == z3.sat
            assert z3.is_true(s.model().eval(cond)) == ((l - 1) * k + i < j)
            s.pop()


def test_the_block_const_lemmas_are_proved_and_hold_at_small_values():
    from ringproof.proofs.ring.lemmas import BLOCK_DIVISORS, prove_library
    status = {r.name: r.proved for r in prove_library()}
    for c in BLOCK_DIVISORS:
        assert status[f"block-const[{c}]"]
        for t, e, m in itertools.product(range(-3, 4), range(c), range(1, 6)):
            for r in range(m):
                x = (c * t + e) * m + r
                assert (x // (c * m), x % (c * m)) == (t, e * m + r)


def test_div_by_a_multiple_of_m_agrees_with_enumeration():
    ctx = Ctx()
    new_var(ctx, "j", 1, PARAMS.n)
    value = ctx.val(mod(var("j") - 1, 2 * PARAMS.m) + div(var("j") - 1, 3 * PARAMS.m) * PARAMS.m)
    s = z3.Solver()
    s.add(*ctx.assumptions)
    for m, k in ((1, 5), (2, 3), (3, 4)):
        for j in range(1, m * k + 1):
            s.push()
            s.add(ctx.m == m, ctx.k == k, z3.Int("j.q") == (j - 1) // m, z3.Int("j.r") == (j - 1) % m)
            assert s.check() == z3.sat
            got = s.model().eval(ctx.int_term(value), model_completion=True).as_long()
            assert got == (j - 1) % (2 * m) + (j - 1) // (3 * m) * m, (m, k, j)
            s.pop()


def test_the_radix_swap_lemma_holds_at_small_values():
    from ringproof.proofs.ring.lemmas import _library, prove_library
    assert {r.name: r.proved for r in prove_library()}["radix-swap"]
    lemma = next(x for x in _library() if x.name == "radix-swap")
    assert "(a·U)·m = (a·m)·U" in lemma.doc
    for a, u, m in itertools.product(range(-3, 4), range(1, 5), range(1, 5)):
        assert (a * u) * m == (a * m) * u


# ------------------------------------------------------------------ Ring Attention: contiguous blocks

def test_contiguous_layout_proves_for_every_n():
    results = verify(load("ring_contiguous").SCHEDULE)
    assert {r.verdict for r in results} == {Verdict.PROVED}, [(r.property, r.reason) for r in results]
    assert {r.tier for r in results} == {"parametric"}


def _contiguous_mutants():
    from ringproof import mod as mod_
    base = load("ring_contiguous")

    def other_block(P, ix, st):
        return (st.operands[0], base.kk[mod_(ix.l - ix.s + 1, P.m) * P.k + ix.b, ix.c])

    return {"no hop": base.SCHEDULE.derive("no-hop", {"scores": dict(send=None)}),
            "wrong block": base.SCHEDULE.derive("wrong-block", {"scores": dict(operands=other_block)})}


@pytest.mark.parametrize("name", ["no hop", "wrong block"])
def test_contiguous_mutants_are_refuted_and_replay(name):
    schedule = _contiguous_mutants()[name]
    refuted = [r for r in verify(schedule) if r.verdict is Verdict.REFUTED]
    assert refuted and all(r.tier == "parametric" for r in refuted)
    for r in refuted:
        assert_same_check_replays(schedule, r)


# ------------------------------------------------------------------ zigzag: requires and derived h

@pytest.fixture(scope="module")
def zigzag():
    """(examples/ring_zigzag.py's schedule, one session): it and its copies with other claims are
    proved in one session, so its counts are derived once."""
    from ringproof.proofs.ring.session import Session
    return load("ring_zigzag").SCHEDULE, Session(Options().budget)


def test_zigzag_with_requires_proves_for_every_n(zigzag):
    schedule, session = zigzag
    results = verify(schedule, Options(), session)
    assert {r.verdict for r in results} == {Verdict.PROVED}, [(r.property, r.reason) for r in results]
    assert {r.tier for r in results} == {"parametric"}


def test_the_chunk_of_a_derived_parameter_is_found_only_under_its_side_condition():
    from dataclasses import replace
    from ringproof.proofs.ring.properties import shape_of
    schedule = load("ring_zigzag").SCHEDULE
    assert shape_of(schedule)[1:] == (2, "h")
    from ringproof import eq, mod
    weaker = replace(schedule, requires=lambda P: eq(mod(P.n, P.m), 0))   # says nothing of 2 | k
    assert shape_of(weaker)[1] == 1


def _zigzag_mutants():
    from ringproof import ite, le, lt, mod as mod_
    Z = load("ring_zigzag")

    def token(P, pe, i):                 # tail chunk 2m − pe − 1: two PEs share a chunk
        return ite(le(i, P.h), (pe - 1) * P.h + i, (2 * P.m - pe - 1) * P.h + i - P.h)

    def target(P, ix, st):
        return Z.w1[token(P, ix.l, ix.i), token(P, mod_(ix.l - ix.s, P.m) + 1, ix.b)]

    def operands(P, ix, st):
        return (Z.q[target(P, ix, st).idx[0], ix.c], Z.kk[target(P, ix, st).idx[1], ix.c])

    def strict(P, ix, st):
        return lt(st.operands[1].idx[0], st.target.idx[0])

    return {"wrong pairing": Z.SCHEDULE.derive("wrong-pairing", {"scores": dict(target=target, operands=operands)}),
            "mask off by one": Z.SCHEDULE.derive("mask-off", {"scores": dict(guard=strict)})}


@pytest.mark.parametrize("name", ["wrong pairing", "mask off by one"])
def test_zigzag_mutants_are_refuted_at_sizes_the_side_condition_allows(name):
    schedule = _zigzag_mutants()[name]
    refuted = [r for r in verify(schedule) if r.verdict is Verdict.REFUTED]
    assert refuted and all(r.tier == "parametric" for r in refuted)
    for r in refuted:
        cex = r.counterexample
        assert schedule.admits(cex.n, cex.m)
        assert_same_check_replays(schedule, r)


def test_requires_is_assumed_shown_necessary_and_refused_where_broken():
    import io
    from ringproof.proofs.cli.main import main
    from ringproof.proofs.ring.bounded import shapes
    from ringproof.proofs.ring.conditions import conditions
    schedule = load("ring_zigzag").SCHEDULE
    assert all(n % (2 * m) == 0 for n, m, _ in shapes(schedule, 12))
    assert (8, 2, 8) in shapes(schedule, 12)
    needed = {c["condition"]: c["counterexample"] for c in conditions(schedule)}
    cex = needed[schedule.requirement()]
    assert cex is not None and not schedule.admits(cex.n, cex.m)
    out, err = io.StringIO(), io.StringIO()
    path = str(EXAMPLES / "ring_zigzag.py")
    assert main(["simulate", path, "-n", "6", "-m", "2"], out, err) == 64
    assert "requires" in err.getvalue() and "n=6, m=2" in err.getvalue()
    assert main(["simulate", path, "-n", "8", "-m", "2"], io.StringIO(), io.StringIO()) == 0
    assert main([path, "--tier", "bounded", "-n", "6", "-m", "2"], io.StringIO(), io.StringIO()) == 64


def test_divisibility_side_conditions_read_as_divides_everywhere():
    """`eq(mod(n, 2m), 0)` reads 2m | n: on the assumed: line, in prove --json and in the report's
    "for all sizes with" column and theorem (all read `conditions`)."""
    import io
    import json
    from ringproof.proofs.cli.main import main
    from ringproof.proofs.report.words import conditions_words
    from ringproof.proofs.ring.conditions import conditions
    from ringproof.schedules.expr import eq, mod, render, var
    n, m = var("n"), var("m")
    assert render(eq(mod(n, 2 * m), 0)) == "2m | n" and render(eq(0, mod(n, m + 1))) == "(m + 1) | n"
    assert render(eq(mod(n, m), 1)) == "n % m = 1"
    schedule = load("ring_zigzag").SCHEDULE
    assert [c["condition"] for c in conditions(schedule)] == ["m | n", "2m | n"]
    assert conditions_words(["m | n", "2m | n"]).endswith("with m | n and 2m | n")
    path = str(EXAMPLES / "ring_zigzag.py")
    out = io.StringIO()
    assert main([path, "--property", "no-conflict"], out, io.StringIO()) == 0
    assert "assumed: m | n, 2m | n\n" in out.getvalue() and "%" not in out.getvalue()
    out = io.StringIO()
    assert main([path, "--property", "no-conflict", "--json"], out, io.StringIO()) == 0
    assert [c["condition"] for c in json.loads(out.getvalue())["conditions"]] == ["m | n", "2m | n"]


def test_claims_may_use_derived_parameters(zigzag):
    from dataclasses import replace
    schedule, session = zigzag
    (counts,) = verify(schedule, Options(properties=("counts",)), session)
    assert counts.verdict is Verdict.PROVED, counts.reason
    wrong = replace(schedule, notes={"claims": {"MAC": "2*m*h*n**2*(2*m*h + 1)/2"}})
    (counts,) = verify(wrong, Options(properties=("counts",)), session)
    assert counts.verdict is Verdict.REFUTED and wrong.admits(counts.counterexample.n, counts.counterexample.m)


# ------------------------------------------------------------------ placement

def test_backward_schedule_with_placement_proves_for_every_n():
    results = verify(load("ring_backward").SCHEDULE)
    assert {r.verdict for r in results} == {Verdict.PROVED}, [(r.property, r.reason) for r in results]
    place = next(r for r in results if r.property == "placement")
    assert place.tier == "parametric" and place.phase == "dv"
    assert "no node of dv in dv after its end witness" in place.details["checks"]


def _backward_mutants():
    from dataclasses import replace
    from ringproof import Move, and_, eq, ne
    base = load("ring_backward").SCHEDULE

    def short(P, ix, st):
        return Move(st.target, when=and_(eq(ix.i, P.k), ne(ix.s, P.m)))

    return {"no return hop": base.derive("no-return-hop", {"dv": dict(send=short)}),
            "no witness": replace(base, name="no-witness", ends=None)}


def test_no_return_hop_is_refuted_with_the_datum_and_the_pe_where_it_ends():
    schedule = _backward_mutants()["no return hop"]
    (r,) = verify(schedule, Options(properties=("placement",)))
    assert r.verdict is Verdict.REFUTED and r.tier == "parametric"
    assert "ends on PE" in r.counterexample.message and ", not on PE" in r.counterexample.message
    assert_same_check_replays(schedule, r)


def test_a_travelling_sum_without_end_witness_proves_and_is_never_proved_on_a_missed_node(monkeypatch):
    """Without `ends`, the nodes that send dv on have later nodes (`prev` inverted), so only the
    return hop must land home: proved. Where the inversion finds none, every node leaving dv home
    is not true of a sum that travels; the schedule is right, so the refutation of that sufficient
    check does not replay and the verdict is unknown, never proved."""
    from ringproof.proofs.ring.properties import placement
    (r,) = verify(_backward_mutants()["no witness"], Options(properties=("placement",)))
    assert r.verdict is Verdict.PROVED, r.reason
    monkeypatch.setattr(placement, "_successors", lambda R, a: [])
    (r,) = verify(_backward_mutants()["no witness"], Options(properties=("placement",)))
    assert r.verdict is Verdict.UNKNOWN and "did not replay" in r.reason


def test_algorithms_declare_where_y_ends_and_a_wrong_placement_is_refuted():
    from dataclasses import replace
    from ringproof import ALGO1, mod as mod_
    (r,) = verify(ALGO1, Options(properties=("placement",)))
    assert r.verdict is Verdict.PROVED and r.phase == "y"
    wrong = replace(ALGO1, placement=lambda P, ref: mod_(ref.idx[1], P.m) + 1)
    (r,) = verify(wrong, Options(properties=("placement",)))
    assert r.verdict is Verdict.REFUTED and (r.counterexample.n, r.counterexample.m) == (2, 2)
    assert r.counterexample.message == "y[1, 1] ends on PE 1, not on PE 2"
    assert_same_check_replays(wrong, r)


# ------------------------------------------------------------------ several outputs

def test_a_computation_with_several_outputs_is_simulated_and_placed_output_by_output():
    from dataclasses import replace
    from ringproof import At, Move, Schedule, computation
    from ringproof.model.ring.machine import run
    mv = load("matvec")
    TWO = computation("two", {"a": "n d", "b": "n d", "x": "d", "y": "n", "z": "n"},
                      ["y[A] += a[A, C] * x[C]", "z[A] += b[A, C] * x[C]"], output=("y", "z"))
    a, b, x = TWO.inputs
    y, z = TWO.outputs
    assert TWO.output is y
    names = {"y": y, "a": a, "x": x}

    def rename(ref, to):
        return {**names, **to}[ref.array.name][ref.idx]

    def phase(name, to):
        return mv.ROWS.derive(name, target=lambda P, ix, st: rename(st.target, to),
                              operands=lambda P, ix, st: tuple(rename(r, to) for r in st.operands),
                              send=lambda P, ix, st: Move(rename(st.send.datum, to), when=st.send.when),
                              prev=lambda P, ix, st: At(name, st.prev.idx),
                              inverse=mv.ROWS.inverse)

    S = Schedule("two", TWO, (phase("ys", {}), phase("zs", {"y": z, "a": b})), home=mv.home, square=False,
                 placement=lambda P, ref: 1)
    results = {(r.property, r.phase): r.verdict for r in verify(S, Options(properties=("coverage", "placement")))}
    assert results[("coverage", "ys")] is Verdict.PROVED and results[("coverage", "zs")] is Verdict.PROVED
    assert {("placement", "y"), ("placement", "z")} <= set(results)
    assert run(S, 4, 2, d=4).max_rel_error < 1e-12
    wrong = replace(S, phases=(S.phases[0], S.phases[0].derive("zs")))     # z never computed
    assert run(wrong, 4, 2, d=4).max_rel_error > 1e-3 or not run(wrong, 4, 2, d=4).ok


# ------------------------------------------------------------------ balance

def _causal_contiguous():
    """Ring Attention's contiguous layout with the causal mask: the PEs of later rows do more."""
    from ringproof import le
    Z, C = load("ring_zigzag"), load("ring_contiguous")
    return C.SCHEDULE.derive("causal-contiguous", {"scores": dict(
        guard=lambda P, ix, st: le(st.operands[1].idx[0], st.target.idx[0]))}, problem=Z.CAUSAL, notes={})


def test_balance_is_derived_per_pe_in_closed_form_and_its_spread_proved():
    from ringproof.proofs.figures import spread
    assert spread.derived(load("ring_contiguous").SCHEDULE)[0] == 0
    zig = spread.summary(load("ring_zigzag").SCHEDULE)
    assert zig["spread"] == "0" and zig["reason"] == "" and "at" not in zig
    assert sympy.simplify(sympy.sympify(zig["per_pe"]["MAC"]) - sympy.sympify("n**2*(n + 1)/(2*m)")) == 0
    naive = spread.summary(_causal_contiguous())
    n, m, l = sympy.symbols("n m l")
    assert sympy.simplify(sympy.sympify(naive["spread"]) - n**3 * (m - 1) / m**2) == 0
    per = sympy.sympify(naive["per_pe"]["MAC"])
    assert [per.subs({n: 16, m: 4, l: x}) // 16 for x in (1, 2, 3, 4)] == [10, 26, 42, 58]
    assert spread.per_pe(_causal_contiguous(), 16, 4)["MAC"] == [160, 416, 672, 928]
    assert naive["per_phase"] == {"scores": naive["per_pe"]["MAC"]}


def test_a_derived_balance_that_disagrees_with_enumeration_is_an_internal_error(monkeypatch):
    from ringproof.errors import InternalError
    from ringproof.proofs.figures import spread
    from ringproof.proofs.figures import nests
    real = nests.count
    monkeypatch.setattr(nests, "count", lambda *a, **k: real(*a, **k) + spread.L - 1)   # off on PE l > 1
    from ringproof.proofs.ring.session import Session
    with pytest.raises(InternalError, match="balance: phase scores: the derived MAC on PE l"):
        spread.derived(_causal_contiguous(), Session())


def test_an_underived_balance_is_unknown_with_its_reason_and_enumerated():
    """Algorithm 3 as printed: its phase 2a's coverage fails, so no per-PE form is kept; the spread
    is unknown, saying why, with the figures enumerated at one size."""
    from ringproof.proofs.figures import spread
    from ringproof.schedules.algo3 import ALGO3_PRINTED
    got = spread.summary(ALGO3_PRINTED)
    assert got["spread"] is None and "its coverage fails" in got["reason"]
    assert got["at"]["spread"] == spread.spread_of(spread.per_pe(ALGO3_PRINTED, got["at"]["n"], got["at"]["m"]))


def test_a_balance_claim_is_refuted_with_a_real_size_or_left_unknown(zigzag):
    from dataclasses import replace
    from ringproof.proofs.figures import spread
    v, why, cex = spread.check_claim(_causal_contiguous(), "0")
    assert v is Verdict.REFUTED and (cex.n, cex.m) == (2, 2) and "enumerated spread 2" in cex.message
    assert cex.replay["confirmed"] and cex.replay["per_pe"]["MAC"] == [2, 4]
    assert spread.check_claim(load("ring_contiguous").SCHEDULE, "0")[0] is Verdict.PROVED
    zig = replace(zigzag[0], notes={"claims": {"balance": "0"}})
    (counts,) = verify(zig, Options(properties=("counts",)), zigzag[1])
    assert counts.verdict is Verdict.PROVED
    assert spread.check_claim(_causal_contiguous(), "n**3*(m - 1)/m**2")[0] is Verdict.PROVED
    v, why, cex = spread.check_claim(_causal_contiguous(), "n**3/m**2")
    assert v is Verdict.REFUTED and cex.replay["measured"] == 0 and (cex.n, cex.m) == (1, 1)   # claimed 1
    from ringproof.schedules.algo3 import ALGO3
    assert spread.check_claim(ALGO3, "0")[0] is Verdict.REFUTED        # at n = 2, m = 2: its spread is 2 there


# ------------------------------------------------------------------ memory (measured)

def test_memory_peak_is_measured_per_pe_and_a_claim_is_never_proved():
    from dataclasses import replace
    from ringproof.model.ring.memory import peak_per_pe
    from ringproof.model.ring.trace import build_trace
    from ringproof.proofs.figures.memory import held
    S = load("ring_contiguous").SCHEDULE
    # n = m = 1: q[1,1], k[1,1] held from cycle 0, w1[1,1] from its MAC to the end: 3 data
    assert peak_per_pe(build_trace(S, 1, 1)) == [3]
    peaks = peak_per_pe(build_trace(S, 8, 2))
    assert len(peaks) == 2 and min(peaks) >= 8 * 8 // 2       # at least its own rows of w1
    v, why, cex = held.check_claim(S, "0")
    assert v is Verdict.REFUTED and (cex.n, cex.m) == (1, 1) and "measured peak 3" in cex.message
    assert held.check_claim(replace(S, notes={}), "n**2") [0] in (Verdict.REFUTED, Verdict.UNKNOWN)


def test_a_derived_parameter_in_loop_bounds_proves_as_its_value():
    from dataclasses import replace
    Z = load("ring_zigzag")
    phase = Z.PHASE.derive(bounds={"i": (1, lambda P, ix: 2 * P.h), "b": (1, lambda P, ix: 2 * P.h)})
    S = replace(Z.SCHEDULE, name="zigzag-h-bounds", phases=(phase,))
    results = verify(S, Options(properties=("coverage", "no-conflict", "counts")))
    assert {r.verdict for r in results} == {Verdict.PROVED}, [(r.property, r.reason) for r in results]
