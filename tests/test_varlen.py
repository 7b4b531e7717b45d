"""Packed sequences: the varlen targets proved for every D, lengths vector and m, and refuted
where they are wrong (proofs/varlen, model/ring/packed.py)."""

from __future__ import annotations

import io
import json
import textwrap

import pytest

from ringproof.model.ring.packed import run
from ringproof.proofs.options import Options
from ringproof.proofs.results import Verdict
from ringproof.proofs.ring.session import Session
from ringproof.proofs.varlen import composition, obligations
from ringproof.proofs.varlen import verify as varlen_verify
from ringproof.schedules.documents import VARLEN, Varlen, varlen
from ringproof.schedules.expr import and_, eq, ite, le

ZIGZAG = VARLEN["zigzag-varlen"]
OPTS = Options()


@pytest.fixture(scope="module")
def session():
    return Session(OPTS.budget)


BASES: dict = {}      # the bases' own proofs, once each


def prove(v, session, tokens=16):
    from ringproof.proofs.ring.prover import verify
    from ringproof.schedules import context_parallel as cp

    key = (v.base.name, v.backward)
    if key not in BASES:
        BASES[key] = verify(cp.BACKWARDS[f"{v.base.name}-bwd"] if v.backward else cp.FORWARDS[v.base.name], OPTS, session)
    results, needed, _ = varlen_verify.prove(v, OPTS, session, max_tokens=tokens, base_results=BASES[key])
    return results, needed


PROVED: dict = {}     # each registered target proved once in this module


def proved(name, session):
    if name not in PROVED:
        PROVED[name] = prove(varlen(name), session)
    return PROVED[name]


# ----------------------------------------------------------------------------- the lemma


@pytest.mark.parametrize("causal", [True, False])
def test_the_composition_lemma_is_proved(causal):
    parts = composition.lemma(causal, padded=True)
    assert [p.proved for p in parts] == [True] * 4, [p.detail for p in parts]


def test_the_lemma_fails_for_overlapping_documents():
    part = composition.prove_pairs(disjoint=False)
    assert not part.proved and part.detail.startswith("refuted")


# ----------------------------------------------------------------------------- the obligations


@pytest.mark.parametrize("name", sorted(VARLEN))
def test_each_registered_row_is_its_base_shifted(name):
    assert all(o.proved for o in obligations.obligations(VARLEN[name]))


def _tail_off_by_one():
    lay = ZIGZAG.base.layout
    return Varlen("tail-off", ZIGZAG.base, False, "the last document's tail one token late",
                  token=lambda P, r, j: P.c + lay.token(P, r, j) + ite(and_(eq(P.i, P.D), le(P.h, j)), 1, 0))


def _local_offsets():
    lay = ZIGZAG.base.layout
    return Varlen("local", ZIGZAG.base, False, "the document's tokens without its offset",
                  token=lambda P, r, j: lay.token(P, r, j))


def _previous_document():
    return Varlen("prev", ZIGZAG.base, False, "a query sees the previous document too",
                  mask=lambda Q, K, q, k: and_(le(Q.i - 1, K.i), le(K.i, Q.i), le(k, q)))


def _padding_attended():
    pad = VARLEN["zigzag-varlen-padded"]
    return Varlen("pad", pad.base, True, "padding not masked", mask=lambda Q, K, q, k: and_(eq(Q.i, K.i), le(k, q)))


MUTANTS = {   # name -> (row, the obligation it breaks, the smallest packing where the run differs)
    "tail": (_tail_off_by_one, "token", ((2,), 1)),
    "local": (_local_offsets, "token", ((2, 2), 1)),
    "prev": (_previous_document, "mask", ((2, 2), 1)),
    "pad": (_padding_attended, "mask", ((1,), 1)),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_mutant_breaks_its_obligation(name):
    make, broken, _ = MUTANTS[name]
    got = {o.name.split(": ", 1)[1]: o for o in obligations.obligations(make())}
    assert not got[broken].proved and got[broken].model        # Z3's model: a generic document
    assert all(o.proved for k, o in got.items() if k != broken and not (name == "tail" and k == "owner and slot"))


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_mutant_is_refuted_at_its_smallest_packing_replayed(name, session):
    make, _, (lengths, m) = MUTANTS[name]
    results, _ = prove(make(), session, tokens=8)
    refuted = [r for r in results if r.verdict is Verdict.REFUTED]
    assert refuted and all(r.verdict is not Verdict.PROVED for r in results)
    cex = refuted[0].counterexample
    assert (tuple(cex.replay["lengths"]), cex.m) == (lengths, m)
    assert run(make(), lengths, m).first_difference is not None                      # replayed
    assert "--lengths" in cex.command(name) and "--lengths" in cex.command(name, "coverage")


# ----------------------------------------------------------------------------- the targets


@pytest.mark.parametrize("name", ["zigzag-varlen", "ring-attention-varlen", "zigzag-varlen-padded", "zigzag-varlen-bwd"])
def test_every_varlen_target_is_proved_parametric(name, session):
    results, needed = proved(name, session)
    assert results and all(r.verdict is Verdict.PROVED and r.tier == "parametric" for r in results), \
        [(r.property, r.phase, r.reason) for r in results if r.verdict is not Verdict.PROVED]
    lemmas = {lemma for r in results for lemma in r.solver["lemmas"]}
    assert {"varlen composition: local slots", f"{name}: token", f"{name}: mask"} <= lemmas
    counts = next(r for r in results if r.property == "counts").details
    if name == "zigzag-varlen":          # each rank's load: Σ_i (L_i² + L_i)/(2m) pairs, the same on every rank
        assert counts["balance"]["spread"] == "0"
        assert counts["balance"]["per_pe"]["MAC"] == "Sum(d*(L[i] + 1)*L[i]/(2*m), (i, 1, D))"
    if name == "ring-attention-varlen":    # active ops are 2(d + 1) per pair: the spread against the model's
        import sympy
        spread = counts["balance"]["spread"]
        assert spread == "Sum(2*(d + 1)*(m - 1)*L[i]**2/m**2, (i, 1, D))"
        for lengths, m in (((4, 2), 2), ((3, 6, 9), 3)):
            pairs = run(varlen(name), lengths, m, numerics=False).per_rank
            L = sympy.IndexedBase("L")
            value = sympy.sympify(spread, locals={"L": L}).subs({"D": len(lengths), "m": m, "d": 1}).doit()
            assert value.subs({L[i + 1]: x for i, x in enumerate(lengths)}) == 4 * (max(pairs) - min(pairs))
    if not VARLEN[name.removesuffix("-bwd")].padded:      # the side condition shown necessary
        cex = needed[0]["counterexample"]
        assert cex is not None and run(varlen(name), cex.replay["lengths"], cex.m, relaxed=True).first_difference


@pytest.mark.parametrize("name, tokens", [("zigzag-varlen", 48), ("zigzag-varlen-bwd", 24),
                                          ("ring-attention-varlen", 24), ("zigzag-varlen-padded", 16)])
def test_the_sums_over_documents_match_every_packing(name, tokens, session):
    """The cross-check of the issue: every packing with D ≤ 3, T ≤ 48, m ≤ 4 (the longer sweeps of
    ring-attention-varlen, whose unit is m, and the padded one under `-m slow`)."""
    v = varlen(name)
    counts = next(r for r in proved(name, session)[0] if r.property == "counts")
    forms = varlen_verify._pair_forms(v, counts.details["base"])
    swept = varlen_verify.sweep(v, tokens, forms)
    assert swept.failed is None, swept.failed.first_difference
    assert swept.packings == len(varlen_verify.packings(v, tokens)) > 10


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ring-attention-varlen", "zigzag-varlen-padded"])
def test_the_long_sweeps(name, session):
    test_the_sums_over_documents_match_every_packing(name, 48 if name == "ring-attention-varlen" else 24, session)


def test_a_wrong_sum_is_caught_by_the_sweep():
    swept = varlen_verify.sweep(ZIGZAG, 8, lambda lengths, m: ([0] * m, None))
    assert swept.failed is not None and swept.failed.broken == "counts"


# ----------------------------------------------------------------------------- the model


def test_the_packed_model_numerics_and_loads():
    got = run(ZIGZAG, (4, 8, 4), 2, d=3)
    assert got.first_difference is None and got.per_rank == [28, 28] and got.pairs == [[16, 16], [12, 12]]
    assert max(got.error.values()) < 1e-12


def test_without_the_side_condition_the_model_says_what_breaks():
    got = run(ZIGZAG, (4, 6), 2, relaxed=True)
    assert got.first_difference and got.broken == "coverage"


# ----------------------------------------------------------------------------- the command


def prove_cli(*argv):
    from ringproof.proofs.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_simulate_and_the_bounded_tier_take_lengths():
    code, out, _ = prove_cli("simulate", "zigzag-varlen", "--lengths", "4,8,4", "-m", "2", "-d", "4")
    assert code == 0 and "pairs per rank (ranks 1..m): 28, 28" in out
    code, out, _ = prove_cli("zigzag-varlen", "--tier", "bounded", "--lengths", "4,8,4", "--lengths", "2,6", "-m", "1", "--json")
    assert code == 0 and [p["verdict"] for p in json.loads(out)["packings"]] == ["proved", "proved"]


@pytest.mark.parametrize("argv, says", [
    (("simulate", "zigzag-varlen", "--lengths", "4,6", "-m", "2"), "document 2 has 6 tokens"),
    (("simulate", "zigzag-varlen", "--lengths", "4,x", "-m", "2"), "comma-separated"),
    (("zigzag-varlen", "--tier", "per-m"), "not one of a varlen target"),
    (("zigzag-varlen", "--max-n", "65"), "T ≤ 64"),
    (("algo1", "--lengths", "4"), "varlen target"),
])
def test_bad_packings_are_one_line(argv, says):
    code, out, err = prove_cli(*argv)
    assert code == 64 and says in err and "Traceback" not in err and err.count("\n") == 1


def test_a_user_varlen_file_is_refuted_with_its_replay(tmp_path):
    path = tmp_path / "my_varlen.py"
    path.write_text(textwrap.dedent('''
        from ringproof import VARLEN, Varlen, and_, le

        ZIGZAG = VARLEN["zigzag-varlen"]
        SCHEDULE = Varlen("sees-the-previous-document", ZIGZAG.base, False, "a wrong mask",
                          mask=lambda Q, K, q, k: and_(le(Q.i - 1, K.i), le(K.i, Q.i), le(k, q)))
    '''))
    code, out, _ = prove_cli(str(path), "--quiet", "--max-n", "8", "--property", "coverage")
    assert code == 1 and "--lengths 2,2 -m 1" in out


def test_the_figure_rows_of_a_varlen_target_are_its_own(session):
    """Asked for by name, balance is the packed schedule's, not the base's: zigzag's spread is 0,
    the padded schedule's (on the same base) not derived; memory stays unknown."""
    from ringproof.proofs.ring.prover import verify
    from ringproof.schedules import context_parallel as cp

    opts = Options(properties=("balance", "memory"))
    base = verify(cp.FORWARDS["zigzag"], opts, session)
    assert next(r for r in base if r.property == "balance").details["spread"] == "0"
    for name, spread in (("zigzag-varlen", "0"), ("zigzag-varlen-padded", None)):
        rows = {r.property: r for r in varlen_verify.prove(varlen(name), opts, session, max_tokens=8, base_results=base)[0]}
        assert rows["balance"].details["spread"] == spread
        assert rows["balance"].verdict is (Verdict.PROVED if spread else Verdict.UNKNOWN)
        assert rows["memory"].verdict is Verdict.UNKNOWN and "no exact memory peak" in rows["memory"].reason


def _answer(path) -> str:
    """Z3's answer on an SMT-LIB file read back as a standalone script."""
    import z3

    s = z3.Solver()
    s.from_file(str(path))
    return str(s.check())


def test_smt2_writes_the_obligations_and_the_lemma_each_read_back_unsat(tmp_path, session):
    """`--smt2 DIR` of a varlen target writes its own queries beside the base's: each obligation's
    and each composition part's, listed in the rows that rest on them, each unsat read back; a
    mutant's broken obligation and the overlapping documents' lemma are written sat."""
    from dataclasses import replace as with_

    proved("zigzag-varlen", session)                      # the base's proof, kept (its files not asked here)
    results, _, _ = varlen_verify.prove(ZIGZAG, with_(OPTS, smt2_dir=str(tmp_path)), session, max_tokens=8,
                                        base_results=BASES[(ZIGZAG.base.name, ZIGZAG.backward)])
    written = sorted(p.name for p in tmp_path.iterdir())
    assert {"zigzag-varlen_token", "zigzag-varlen_owner_and_slot", "zigzag-varlen_mask", "varlen_composition_loads",
            "varlen_composition_local_slots", "varlen_composition_document-causal_pairs"} == \
        {w.rsplit(".", 2)[0] for w in written}, written
    assert all(_answer(p) == "unsat" for p in tmp_path.iterdir())
    listed = {f for r in results for f in r.solver.get("smt2", [])}
    assert {str(p) for p in tmp_path.iterdir()} <= listed
    coverage = next(r for r in results if r.property == "coverage")
    assert any("document-causal_pairs" in f for f in coverage.solver["smt2"])
    bad = tmp_path / "bad"
    with composition.exporting(str(bad)):
        broken = {o.part: o for o in obligations.obligations(MUTANTS["prev"][0]())}["mask"]
        overlap = composition.prove_pairs(disjoint=False)
    assert not broken.proved and not overlap.proved
    assert [_answer(f) for f in broken.smt2 + overlap.smt2] == ["sat", "sat"]
