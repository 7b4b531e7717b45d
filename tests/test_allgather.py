"""All-gather context parallelism: llama3 and llama3-varlen proved for every m, T, lengths vector
and head layout, each figure against the model's run, and the issue's mutants refuted with a
replayed counterexample (proofs/allgather, model/allgather)."""

from __future__ import annotations

import io
import itertools
import json

import pytest

from ringproof.model.allgather import rules
from ringproof.model.allgather import run as model
from ringproof.model.allgather.run import AllGatherRun, run
from ringproof.proofs.allgather import composition, obligations
from ringproof.proofs.allgather import verify as ag
from ringproof.proofs.results import Verdict
from ringproof.schedules.allgather import ALLGATHER, mutant

LLAMA3, VARLEN = ALLGATHER["llama3"], ALLGATHER["llama3-varlen"]

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
    lemmas = {x for r in results for x in r.solver["lemmas"]}
    assert {"all-gather composition: segments", "all-gather composition: balance", f"{name}: head groups"} <= lemmas


def test_the_obligations_and_the_lemmas_hold():
    assert [o.name for o in obligations.obligations(VARLEN) if not o.proved] == []
    assert [p.name for p in composition.lemma() if not p.proved] == []
    assert all(ag.closed_forms().values())


def test_the_spread_is_derived_and_equals_the_run():
    import sympy

    forms = ag.derived()
    S, m, r = sympy.symbols("S m r", integer=True, positive=True)
    assert sympy.simplify(forms.spread - (m - 1) * S ** 2) == 0
    assert sympy.simplify(forms.increase - S ** 2) == 0
    for T, m_ in ((2, 2), (6, 3), (16, 4), (12, 1)):
        got = run(LLAMA3, (T,), m_, numerics=False)
        S_ = T // m_
        assert got.pairs == [forms.at("rank", S=S_, r=i) for i in range(m_)]
        assert max(got.pairs) - min(got.pairs) == forms.at("spread", m=m_, S=S_) == (m_ - 1) * S_ * S_


@pytest.mark.parametrize("claim, lengths, m", [("0", [2], 2), ("(m-1)*S", [4], 2), ("m*S**2", [1], 1)])
def test_a_false_spread_claim_is_refuted_with_a_size(claim, lengths, m):
    got = ag.spread_claim(LLAMA3, claim)
    assert got["verdict"] == "refuted"
    cex = got["counterexample"]
    assert (cex["lengths"], cex["m"]) == (lengths, m)
    again = run(LLAMA3, tuple(lengths), m, numerics=False)
    assert max(again.pairs) - min(again.pairs) == cex["measured"] != int(cex["claimed"])
    assert ag.spread_claim(LLAMA3, "(m - 1)*T**2/m**2")["verdict"] == "proved"


def test_the_packed_spread_is_bounded_and_the_bound_is_attained():
    """Every composition of T = mS ≤ 9 (m ≤ 4): spread ≤ (m − 1)·S², equal for one document."""
    for m, S in itertools.product(range(1, 5), range(1, 4)):
        T = m * S
        if T > 9:
            continue
        worst = 0
        for k in range(1, T + 1):
            for cut in itertools.combinations(range(1, T), k - 1):
                bounds = (0, *cut, T)
                lengths = tuple(b - a for a, b in zip(bounds, bounds[1:]))
                got = run(VARLEN, lengths, m, numerics=False)
                spread = max(got.pairs) - min(got.pairs)
                assert spread == ag.packing_spread(VARLEN, lengths, m) <= (m - 1) * S * S
                worst = max(worst, spread)
        assert worst == (m - 1) * S * S == ag.packing_spread(VARLEN, (T,), m)
    assert ag.spread_claim(VARLEN, "(m-1)*S")["counterexample"]["lengths"] == [4]
    assert ag.spread_claim(VARLEN, "(m-1)*S**2")["verdict"] == "proved"


@pytest.mark.parametrize("heads", [(1, 1, 1), (4, 2, 1), (6, 3, 1), (6, 6, 3), (8, 2, 2)])
def test_the_measured_peak_is_the_memory_form(heads):
    Hd = rules.heads(*heads)
    forms = ag.derived()
    for lengths, m in (((16,), 4), ((3, 5, 4), 3), ((4, 8, 4), 1)):
        t = LLAMA3 if len(lengths) == 1 else VARLEN
        got = run(t, lengths, m, d=3, heads=Hd)
        T, S = sum(lengths), sum(lengths) // m
        assert got.first_difference is None and max(got.error.values()) < 1e-12
        for (f, b), (pf, pb) in zip(got.held, got.peak):
            assert f == rules.memory(T, S, 3, Hd, False) and b == rules.memory(T, S, 3, Hd, True)
            assert pf == forms.at("forward", T=T, S=S, d=3, H=Hd.H, Hk=Hd.Hk, s=Hd.s) == sum(f.values())
            assert pb == forms.at("backward", T=T, S=S, d=3, H=Hd.H, Hk=Hd.Hk, s=Hd.s)
            # the gathered K and V of a head group: T·s·d each, twice (this group's, the next one's), whatever m
            assert f["kv buffer"] == f["kv buffer (next group)"] == 2 * T * Hd.s * 3
        assert got.received[0] == rules.received(m, S, 3, Hd)


def test_a_memory_form_that_misses_an_array_is_refuted(monkeypatch):
    real = rules.memory
    monkeypatch.setattr(rules, "memory", lambda T, S, d, Hd, b: {k: v for k, v in real(T, S, d, Hd, b).items()
                                                                 if k != "kv buffer (next group)"})
    _, failed = ag.sweep(VARLEN, 4)
    assert failed is not None and failed.broken == "memory" and "held" in failed.first_difference


def test_the_model_measures_what_it_allocates(monkeypatch):
    """A model holding one more array than the rules say is caught by the memory row."""
    real = model.Ledger.hold

    def more(self, name, array):
        if name == "lse":
            real(self, "scratch", array)
        return real(self, name, array)
    monkeypatch.setattr(model.Ledger, "hold", more)
    _, failed = ag.sweep(LLAMA3, 4)
    assert failed is not None and failed.broken == "memory"


def test_a_wrong_gqa_head_map_breaks_head_groups(monkeypatch):
    monkeypatch.setattr(rules, "kv_head", lambda Hd, h: h % Hd.Hk)       # interleaved, not h // (H/Hk)
    ob = {o.name.split(": ")[1]: o for o in obligations.obligations(VARLEN)}
    assert not ob["head groups"].proved and ob["head groups"].model
    got = run(VARLEN, (4,), 2, heads=rules.heads(4, 2, 1))
    assert got.broken == "data-flow" and "query head 1 reads KV head 1" in got.first_difference
    got = run(VARLEN, (4,), 2, heads=rules.heads(4, 2, 2))             # one group: every KV head gathered
    assert got.first_difference is None and max(got.error.values()) > 1e-3   # the numerics see it


def test_a_head_group_computing_the_wrong_query_heads_is_caught(monkeypatch):
    monkeypatch.setattr(rules, "group_q", lambda Hd, g: (g * Hd.s * Hd.R, (g + 1) * Hd.s * Hd.R + 1))
    ob = {o.name.split(": ")[1]: o for o in obligations.obligations(VARLEN)}
    assert not ob["head groups"].proved
    got = run(VARLEN, (2,), 1, heads=rules.heads(4, 2, 1))
    assert got.broken in ("coverage", "data-flow")


def test_a_reduce_scatter_onto_the_wrong_rank_is_caught(monkeypatch):
    """The collectives' chunk is the rank's own range: rotated by one rank, dk, dv would go home wrong."""
    monkeypatch.setattr(rules, "chunk", lambda S, r: (((r + 1) % 2) * S, ((r + 1) % 2 + 1) * S))
    ob = {o.name.split(": ")[1]: o for o in obligations.obligations(VARLEN)}
    assert not ob["ranks"].proved
    got = run(VARLEN, (2, 2), 2)
    assert got.broken == "well-formed" and "the collectives' chunk is [2, 4]" in got.first_difference


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
    assert (cex.replay["lengths"], cex.m) == ([2], 2) and cex.replay["replayed"] is True
    again = run(t, tuple(cex.replay["lengths"]), cex.m)
    assert again.first_difference is not None                                      # replayed
    assert again.first_difference.split(": ", 1)[1] == cex.message == cex.replay["first_difference"].split(": ", 1)[1]
    assert run(VARLEN, tuple(cex.replay["lengths"]), cex.m).first_difference is None   # the target is right there
    assert "--lengths" in cex.command(name)


def test_a_difference_the_replay_does_not_reproduce_is_not_a_refutation(monkeypatch):
    """The replay runs the model again: a failure it cannot reproduce leaves the row unknown."""
    fake = AllGatherRun((2,), 2, 2, "lengths 2, m=2: (query 1, key 0) is computed 0 times, not once", "coverage",
                        heads=model.DEFAULT_HEADS)
    monkeypatch.setattr(ag, "sweep", lambda t, tokens, forms: (1, fake))
    rows = {(r.property, r.phase): r for r in ag.prove(VARLEN)}
    assert rows[("coverage", "forward")].verdict is Verdict.UNKNOWN
    assert "not on replay (valid)" in rows[("coverage", "forward")].reason


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
    code, out, _ = cli("simulate", "llama3", "-n", "16", "-m", "4", "--heads", "4", "--kv-heads", "2",
                       "--heads-k-stride", "1", "--json")
    data = json.loads(out)
    assert code == 0 and data["pairs_per_rank"] == [10, 26, 42, 58] and data["spread"] == 48
    assert [p["forward"] for p in data["peak_per_rank"]] == [data["memory_form"]["forward"]] * 4
    assert data["heads"] == {"H": 4, "Hk": 2, "s": 1, "groups": 2}
    code, out, _ = cli("llama3", "--tier", "bounded", "-n", "16", "-m", "4", "--json")
    assert code == 0 and json.loads(out)["packings"][0]["pairs_per_rank"] == [10, 26, 42, 58]
    code, out, _ = cli("llama3", "--quiet")
    assert code == 0 and "S²·(m − 1)" in out and "4·T·d·s" in out
    code, out, _ = cli("llama3", "--quiet", "--property", "balance", "--json")
    assert code == 0 and [(r["property"], r["phase"]) for r in json.loads(out)["results"]] == [("counts", "balance")]


@pytest.mark.parametrize("argv, says", [
    (("simulate", "llama3-varlen", "--lengths", "4,7", "-m", "2"), "m | T"),
    (("simulate", "llama3", "--lengths", "4,4", "-m", "2"), "one sequence"),
    (("simulate", "llama3", "-n", "4", "-m", "2", "--heads", "4", "--kv-heads", "3"), "must divide --heads"),
    (("simulate", "llama3", "-n", "4", "-m", "2", "--heads", "4", "--heads-k-stride", "3"), "must divide --kv-heads"),
    (("simulate", "llama3", "-n", "4", "-m", "2", "--batch", "2"), "--batch"),
    (("simulate", "algo1", "-n", "4", "-m", "2", "--kv-heads", "2"), "all-gather target"),
    (("llama3-varlen", "--tier", "per-m"), "not one of an all-gather target"),
    (("llama3-varlen", "--tier", "bounded"), "--lengths"),
])
def test_bad_input_is_one_line(argv, says):
    code, _, err = cli(*argv)
    assert code == 64 and says in err and "Traceback" not in err and err.count("\n") == 1


def test_smt2_writes_the_all_gather_queries_each_read_back_unsat(tmp_path):
    """`prove llama3-varlen --smt2 DIR`: the obligations' and the composition lemmas' queries are
    written, each row lists those it rests on, each file is unsat read back."""
    import z3

    code, out, _ = cli("llama3-varlen", "--smt2", str(tmp_path), "--json", "--quiet")
    assert code == 0
    files = sorted(tmp_path.iterdir())
    assert {f.name.rsplit(".", 2)[0] for f in files} >= {"llama3-varlen_ranks", "all-gather_composition_segments"}
    for f in files:
        s = z3.Solver()
        s.from_file(str(f))
        assert s.check() == z3.unsat, f.name
    listed = {p for r in json.loads(out)["results"] for p in r["solver"].get("smt2", [])}
    assert listed == {str(f) for f in files}
