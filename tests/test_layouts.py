"""Block and chunk layouts (issue 25): the block-radix normalization agrees with enumeration, and the
contiguous (Ring Attention) and zigzag schedules of examples/ prove, their mutants refuted and
replayed."""

import importlib.util
import itertools
import sys
from pathlib import Path

import pytest
import z3

from twins import assert_same_check_replays

from ringproof.proofs.ring.iterations import new_var
from ringproof.proofs.ring.normalize import PARAMS, Ctx
from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.results import Verdict
from ringproof.schedules.expr import div, lt, mod, var

EXAMPLES = Path(__file__).parent.parent / "examples"


def load(name):
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(EXAMPLES))


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


def test_the_radix_swap_lemma_holds_at_small_values():
    from ringproof.proofs.ring.lemmas import _library, library_status
    assert library_status()["radix-swap"]
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

def test_zigzag_with_requires_proves_for_every_n():
    schedule = load("ring_zigzag").SCHEDULE
    results = verify(schedule)
    assert {r.verdict for r in results} == {Verdict.PROVED}, [(r.property, r.reason) for r in results]
    assert {r.tier for r in results} == {"parametric"}


def test_the_chunk_of_a_derived_parameter_is_found_only_under_its_side_condition():
    from dataclasses import replace
    from ringproof.proofs.ring.properties import shape_of
    schedule = load("ring_zigzag").SCHEDULE
    assert shape_of(schedule)[1] == 2
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


def test_claims_may_use_derived_parameters():
    from dataclasses import replace
    schedule = load("ring_zigzag").SCHEDULE
    (counts,) = verify(schedule, Options(properties=("counts",)))
    assert counts.verdict is Verdict.PROVED, counts.reason
    wrong = replace(schedule, notes={"claims": {"MAC": "2*m*h*n**2*(2*m*h + 1)/2"}})
    (counts,) = verify(wrong, Options(properties=("counts",)))
    assert counts.verdict is Verdict.REFUTED and wrong.admits(counts.counterexample.n, counts.counterexample.m)
