"""Derived sizes (issue 25): a size defined by a characterising condition (`Least`), known to Z3 only
by that condition, found by search on ints, and used in loop bounds, formulas and claims."""

import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest
import z3

from helpers.cli import call
from ringproof import BadInput, Loop, Options, Verdict, le, lt, verify
from ringproof.proofs.figures.counting import counts
from ringproof.proofs.ring.normalize import Ctx, NormalizationError
from ringproof.schedules.expr import var

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "matvec_padded.py"


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SCHEDULE


PADDED = _load(EXAMPLE)
K_OF = PADDED.derived["K"]


def least_k(n: int) -> int:
    return next(K for K in range(1, n + 1) if K * (K + 3) >= 2 * n)


def _with(schedule, **least):
    return replace(schedule, derived={"K": replace(K_OF, **least)})


def test_search_finds_the_least_k_and_refuses_when_none_fits():
    for n in range(1, 60):
        m = next(m for m in (3, 2, 1) if n % m == 0)
        assert K_OF.value(_params(n, m), "K") == least_k(n)
    with pytest.raises(BadInput, match=r"no K in 1\.\.10 satisfies its condition at n=66"):
        _with(PADDED, hi=lambda P: 10).derived["K"].value(_params(66, 1), "K")


def _params(n, m):
    from ringproof import params
    return params(n, m)


def _ctx(n=None):
    ctx = Ctx(shape=PADDED.shape)
    if n is not None:
        ctx.assumptions.append(ctx.k * ctx.m == n)
    return ctx


def test_z3_knows_k_by_its_condition_alone_and_it_is_the_searched_value():
    """The defining conditions pin K to the value search finds, at every n ≤ 40 (enumeration)."""
    for n in range(1, 41):
        ctx = _ctx(n)
        K = ctx.int_term(ctx.val(var("K")))
        s = z3.Solver()
        s.add(*ctx.assumptions, ctx.m == 1, K != least_k(n))
        assert s.check() == z3.unsat, n
        s = z3.Solver()
        s.add(*ctx.assumptions, ctx.m == 1, K == least_k(n))
        assert s.check() == z3.sat, n


def test_facts_about_k_follow_for_every_n_and_false_ones_do_not():
    ctx = _ctx()
    K, n = ctx.int_term(ctx.val(var("K"))), ctx.k * ctx.m
    assert ctx.prove(z3.And(K >= 1, K <= n, 2 * n <= K * (K + 3)))
    assert ctx.prove((K - 1) * (K + 2) < 2 * n)
    assert not ctx.prove(K <= n - 1)          # n = 1: K = 1


def test_k_is_not_assumed_where_its_existence_is_not_proved():
    """hi = 10 holds the least K only up to n = 65: no query may assume K exists."""
    capped = _with(PADDED, hi=lambda P: 10)
    with pytest.raises(NormalizationError, match="derived parameter K: not shown"):
        Ctx(shape=capped.shape).val(var("K"))
    results = verify(capped, Options(max_n=8))
    assert {r.verdict for r in results} == {Verdict.UNKNOWN}
    assert all("K" in r.reason for r in results), [r.reason for r in results]


@pytest.fixture(scope="module")
def session():
    """PADDED and its copies with other claims share one session: its counts are derived once."""
    from ringproof.proofs.ring.session import Session
    return Session(Options().budget)


def test_the_padded_example_proves_every_property_and_its_claims_naming_k(session):
    results = verify(PADDED, Options(), session)
    assert all(r.verdict is Verdict.PROVED for r in results), [(r.property, r.reason) for r in results]
    c = counts(PADDED, session)
    for n, m in ((1, 1), (6, 3), (10, 2), (12, 4)):
        assert c.at(n, m, shape=PADDED.shape)["cycles"] == n // m * (n + least_k(n))


@pytest.mark.parametrize("change, check, needle", [
    (dict(guard=lambda P, ix, st: le(ix.j, P.n + P.K - 1), send=lambda P, ix, st: replace(
        st.send, when=lt(ix.j, P.n + P.K - 1))), "well-formed", "out of range"),
])
def test_a_mutant_using_k_is_refuted_and_replays(change, check, needle):
    bad = PADDED.derive("padded-mutant", {"rows": change})
    results = {r.property: r for r in verify(bad, Options(properties=(check,)))}
    r = results[check]
    assert r.verdict is Verdict.REFUTED and needle in r.counterexample.message
    assert r.tier == "parametric"      # found by Z3, then replayed at its size on the ring model


def test_a_claim_with_the_wrong_k_is_refuted(session):
    bad = replace(PADDED, notes={"claims": {"cycles": "n*(n + K + 1)/m"}})
    (r,) = verify(bad, Options(properties=("counts",)), session)
    assert r.verdict is Verdict.REFUTED and r.counterexample.n == 1


def test_a_loop_bound_may_name_a_derived_parameter():
    rows = PADDED.phases[0]
    named = replace(PADDED, phases=(replace(rows, loops=(rows.loops[0], Loop("j", 1, "K"))),))
    assert counts(named).at(12, 3, shape=named.shape)["cycles"] == 4 * least_k(12)
    with pytest.raises(BadInput, match="bound 'q' is not an int"):
        replace(PADDED, phases=(replace(rows, loops=(rows.loops[0], Loop("j", 1, "q"))),))
    with pytest.raises(BadInput, match="also the name of a loop"):
        replace(PADDED, derived={"j": K_OF})


def test_simulate_and_the_bounded_tier_run_k_concretely():
    code, out, _ = call("simulate", str(EXAMPLE), "-n", "6", "-m", "3")
    assert code == 0 and "cycles        18" in out          # 2 blocks of n + K(6) = 6 + 3 cycles
    code, out, _ = call(str(EXAMPLE), "--tier", "bounded", "--max-n", "8")
    assert code == 0 and "derived: K = the least K in 1..n with" in out


# ------------------------------------------------------------------ an extent other than n and d

def _chunk_matvec(rows=lambda P, ix: P.h, size="h"):
    """y = a·x for an h × n matrix a (h = n/(2m), 2m | n; or K × n): each row's sum walks the ring
    once, column C added on the PE that holds it, PE ((C − 1) mod m) + 1."""
    from ringproof import HOME, MAC, At, Move, Phase, Schedule, Step, and_, computation, div, eq, mod, wrap

    problem = computation("chunk-matvec", {"a": f"{size} n", "x": "n", "y": size}, ["y[A] += a[A, C] * x[C]"])
    a, x = problem.inputs
    y = problem.output

    def step(P, ix):
        here = eq(ix.l, wrap(ix.j, P.m))
        return Step(pe=ix.l, op=MAC, target=y[ix.i], operands=(a[ix.i, ix.j], x[ix.j]), guard=here,
                    send=Move(y[ix.i], when=and_(here, lt(ix.j, P.n))), first=eq(ix.j, 1),
                    prev=At("rows", dict(i=ix.i, j=ix.j - 1, l=wrap(ix.l - 1, P.m))), sources=(HOME, HOME))

    phase = Phase("rows", (Loop("i", 1, rows), Loop("j", 1, "n")), step,
                  inverse=lambda P, key: dict(i=key[0], j=key[1], l=wrap(key[1], P.m)))
    return Schedule("chunk-matvec", problem, (phase,), home=lambda P, ref: wrap(ref.idx[-1], P.m),
                    requires=lambda P: eq(mod(P.n, 2 * P.m), 0),
                    derived={"h": lambda P: div(P.n, 2 * P.m), "K": K_OF},
                    notes={"claims": {"cycles": f"{size}*n", "MAC": f"{size}*n"}})


@pytest.mark.parametrize("size", ["h", "K"])
def test_an_array_may_range_over_a_derived_size(size):
    schedule = _chunk_matvec(lambda P, ix: getattr(P, size), size)
    results = verify(schedule, Options())
    assert all(r.verdict is Verdict.PROVED for r in results), [(r.property, r.reason) for r in results]
    assert {r.tier for r in results} == {"parametric"}
    from ringproof import run
    ring = run(schedule, 8, 2)
    assert not ring.violations and ring.max_rel_error < 1e-12 and ring.cycles == {"h": 2, "K": 3}[size] * 8
    bounded = verify(schedule, Options(tier="bounded", max_n=8))
    assert {r.verdict for r in bounded} == {Verdict.PROVED}


def test_an_index_beyond_a_derived_extent_is_refuted():
    results = verify(_chunk_matvec(rows=lambda P, ix: P.h + 1), Options(properties=("well-formed",)))
    (r,) = results
    assert r.verdict is Verdict.REFUTED and r.tier == "parametric", r.reason
    cex = r.counterexample
    assert cex.n % (2 * cex.m) == 0


def test_an_extent_that_is_no_size_is_bad_input():
    from ringproof import computation
    with pytest.raises(BadInput, match="ranges over 'q', which is neither a parameter"):
        problem = computation("p", {"a": "q n", "x": "n", "y": "q"}, ["y[A] += a[A, C] * x[C]"])
        replace(_chunk_matvec(), problem=problem)
    with pytest.raises(BadInput, match="each must name a size"):
        computation("p", {"a": "2 n", "x": "n", "y": "2"}, ["y[A] += a[A, C] * x[C]"])


def test_the_report_states_the_derived_sizes_and_checks_claims_that_name_them(tmp_path):
    """A claim naming h or K is compared with the derived form in the report (it was bad input
    there); the theorem says what each derived size is."""
    import json
    code, _, err = call("report", str(EXAMPLE), "--format", "json", "-o", str(tmp_path / "r.json"), "--front", "no")
    assert code == 0, err
    (section,) = json.loads((tmp_path / "r.json").read_text())["targets"]
    assert section["derived"] == {"K": "the least K in 1..n with 2·n ≤ K·(K + 3)"}
    assert section["theorem"]["words"].endswith("Here K = the least K in 1..n with 2·n ≤ K·(K + 3).")
    assert {r["quantity"]: r["claim_check"] for r in section["counts"]["rows"]}["cycles"] == "equal"
    zigzag = ROOT / "examples" / "ring_zigzag.py"
    code, _, err = call("report", str(zigzag), "--property", "counts", "--format", "md", "-o", str(tmp_path / "z.md"),
                        "--front", "no")
    assert code == 0, err
    text = (tmp_path / "z.md").read_text()
    assert "with m | n and 2m | n" in text and "Here h = ⌊n/(2·m)⌋." in text and "n \\ (2·m)" not in text


def test_a_memory_claim_may_name_k(session):
    """Each size's claim takes K's value there (it was left a symbol, never equal to a figure)."""
    (r,) = verify(replace(PADDED, notes={"claims": {"memory": "n + K"}}), Options(properties=("counts",)), session)
    assert r.verdict is Verdict.REFUTED and "measured peak 3, claimed 2" in r.counterexample.message


def test_the_docs_quote_the_example():
    """docs/dsl.md's Least block is the example's code (lines with an elision aside)."""
    import re
    doc = (ROOT / "docs" / "dsl.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if "Least(" in b)
    example = EXAMPLE.read_text()
    for line in block.strip().splitlines():
        assert "..." in line or line.strip() in example, line
