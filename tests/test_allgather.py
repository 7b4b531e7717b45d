"""All-gather context parallelism: llama3 and llama3-varlen proved for every m, T and lengths
vector, and the issue's mutants refuted with a replayed counterexample (proofs/allgather,
model/allgather)."""

from __future__ import annotations

import io
import json

import pytest

from ringproof.model.allgather.run import run
from ringproof.proofs.allgather import composition, obligations
from ringproof.proofs.allgather import verify as ag
from ringproof.proofs.results import Verdict
from ringproof.schedules.allgather import ALLGATHER, mutant

VARLEN = ALLGATHER["llama3-varlen"]

MUTANTS = {   # name -> (target, the obligation it breaks)
    "k-from-rank-start": (mutant("k-from-rank-start", k_lo=lambda R, C: R.lo), "segment keys"),
    "q-not-clipped-at-end": (mutant("q-not-clipped-at-end", q_hi=lambda R, C: C.c + C.L), "segment queries"),
    "crossing-counted-twice": (mutant("crossing-counted-twice", q_lo=lambda R, C: C.c), "segment queries"),
}

PROVED: dict = {}


def proved(name):
    if name not in PROVED:
        PROVED[name] = ag.prove(ALLGATHER[name])
    return PROVED[name]


@pytest.mark.parametrize("name", sorted(ALLGATHER))
def test_each_target_is_proved_parametric(name):
    results = proved(name)
    assert len(results) == len(ag.ROWS)
    assert all(r.verdict is Verdict.PROVED and r.tier == "parametric" for r in results), \
        [(r.property, r.phase, r.reason) for r in results if r.verdict is not Verdict.PROVED]
    assert "all-gather composition: segments" in {x for r in results for x in r.solver["lemmas"]}


def test_the_obligations_and_the_lemma_hold():
    assert all(o.proved for o in obligations.obligations(VARLEN))
    assert all(p.proved for p in composition.lemma())
    assert all(ag.closed_forms().values())


def test_llama3_closed_forms_equal_the_run():
    got = run(ALLGATHER["llama3"], (16,), 4, d=3)
    S = 4
    assert got.first_difference is None and got.pairs == [S * S * r + S * (S + 1) // 2 for r in range(4)]
    assert max(got.pairs) - min(got.pairs) == 3 * S * S                   # spread (m − 1)S²
    assert sum(got.held[0][0].values()) == 2 * 16 * 3 + 2 * 4 * 3          # 2Td + 2Sd
    assert max(got.error.values()) < 1e-12


def test_cu_seqlens_as_the_library_computes_them():
    # lengths 4,8,4 on 2 ranks: document 2 crosses ranks (llama3_flash_attn_prepare_cu_seqlens)
    assert VARLEN.prepare_cu_seqlens((4, 8, 4), 2, 0) == ((0, 4, 8), (0, 4, 8), (0, 8))
    assert VARLEN.prepare_cu_seqlens((4, 8, 4), 2, 1) == ((0, 4, 8), (0, 8, 12), (4, 16))
    assert len(VARLEN.expected_pairs((4, 8, 4), 2)) == 4 * 5 // 2 + 8 * 9 // 2 + 4 * 5 // 2


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_mutant_breaks_its_obligation(name):
    t, broken = MUTANTS[name]
    got = {o.name.split(": ", 1)[1]: o for o in obligations.obligations(t)}
    assert not got[broken].proved and got[broken].model


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_mutant_is_refuted_with_its_replay(name):
    t, _ = MUTANTS[name]
    results = ag.prove(t, max_tokens=8)
    refuted = [r for r in results if r.verdict is Verdict.REFUTED]
    assert refuted and not any(r.verdict is Verdict.PROVED for r in results if r.property in ("coverage", "placement"))
    cex = refuted[0].counterexample
    again = run(t, tuple(cex.replay["lengths"]), cex.m)
    assert again.first_difference is not None                                      # replayed
    assert again.first_difference.split(": ", 1)[1] == cex.message
    assert run(VARLEN, tuple(cex.replay["lengths"]), cex.m).first_difference is None   # the target is right there
    assert "--lengths" in cex.command(name)


def test_a_wrong_closed_form_is_caught(monkeypatch):
    monkeypatch.setattr(ag, "segment_pairs", lambda qa, qb, c: (qb - qa) * (qb + qa - 2 * c) // 2)
    _, failed = ag.sweep(VARLEN, 6)
    assert failed is not None and failed.broken == "counts"


def cli(*argv):
    from ringproof.proofs.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_the_commands():
    code, out, _ = cli("simulate", "llama3-varlen", "--lengths", "4,8,4", "-m", "2", "-d", "4")
    assert code == 0 and "pairs per rank (ranks 0..m−1): 20, 36" in out and "local_k_slice [4, 16)" in out
    code, out, _ = cli("llama3", "--tier", "bounded", "-n", "16", "-m", "4", "--json")
    assert code == 0 and json.loads(out)["packings"][0]["pairs_per_rank"] == [10, 26, 42, 58]
    code, out, _ = cli("llama3", "--quiet")
    assert code == 0 and "(m − 1)·S²" in out


@pytest.mark.parametrize("argv, says", [
    (("simulate", "llama3-varlen", "--lengths", "4,7", "-m", "2"), "m | T"),
    (("simulate", "llama3", "--lengths", "4,4", "-m", "2"), "one sequence"),
    (("llama3-varlen", "--tier", "per-m"), "not one of an all-gather target"),
    (("llama3-varlen", "--tier", "bounded"), "--lengths"),
])
def test_bad_input_is_one_line(argv, says):
    code, _, err = cli(*argv)
    assert code == 64 and says in err and "Traceback" not in err and err.count("\n") == 1
