"""The online-softmax lemma (proofs/cp/online_softmax.py): proved once, checked against floats, and
its missing-rescale mutant refuted with the smallest concrete counterexample."""

import random

from ringproof.proofs.cp.online_softmax import concrete_counterexample, fold, lemma, prove_step, softmax_average


def test_the_lemma_is_proved():
    parts = lemma()
    assert parts and all(p.proved for p in parts), parts


def test_the_fold_equals_softmax_on_random_blocks():
    rng = random.Random(7)
    for _ in range(300):
        blocks = [([rng.uniform(-30, 30) for _ in range(k)], [rng.uniform(-1, 1) for _ in range(k)])
                  for k in (rng.randint(1, 5) for _ in range(rng.randint(1, 6)))]
        got, want = fold(blocks)[0], softmax_average(blocks)
        assert abs(got - want) <= 1e-12 * max(1.0, abs(want))
    assert concrete_counterexample(rescale=True, limit=2) is None


def test_a_missing_rescale_is_refuted_at_its_smallest_size():
    step = prove_step(rescale=False)
    assert not step.proved and step.detail.startswith("refuted")
    blocks, got, want = concrete_counterexample(rescale=False)
    # two blocks of one key: the second raises the max, the first block's share is not scaled down
    assert [len(s) for s, _ in blocks] == [1, 1]
    assert abs(fold(blocks, rescale=False)[0] - got) == 0 and abs(got - want) > 0.1


def test_the_online_softmax_forms_are_read_and_bad_ones_refused():
    import pytest

    from ringproof.errors import BadInput
    from ringproof.schedules.computation import computation
    from ringproof.schedules.dsl import EAC, MAX, NORM

    arrays = {"w1": "n n", "v": "n d", "mx": "n", "l": "n", "o": "n d", "y": "n d"}
    p = computation("online", arrays, ["mx[A] max= w1[A, B] if B <= A",
                                       "l[A] += exp(w1[A, B] - mx[A]) rescaled if B <= A",
                                       "o[A, C] += exp(w1[A, B] - mx[A]) * v[B, C] rescaled",
                                       "y[A, C] = o[A, C] / l[A]"])
    mx, l, o, y = p.equations
    assert (mx.op, l.op, o.op, y.op) == (MAX, EAC, EAC, NORM)
    assert (mx.reduce, l.reduce, o.reduce, y.reduce) == ("n", "n", "n", None)
    assert (l.rescaled, o.rescaled, mx.rescaled) == (True, True, False)
    assert [r.array.name for r in o.operands(None, 1, 2, 3)] == ["w1", "mx", "v"]
    assert p.output.name == "y"
    for bad in ("w1[A, B] += v[A, C] * v[B, C] rescaled",         # only exp(a − b) sums are rescaled
                "y[A, C] = o[A, B] / l[A]",                      # a division has no reduction
                "mx[A] max= w1[A, B] * v[B, A]"):
        with pytest.raises(BadInput):
            computation("bad", {**arrays, "w1": "n n"}, [bad])


def test_every_online_phase_of_the_forward_cites_the_lemma():
    from ringproof.proofs.cli.targets import registry
    from ringproof.proofs.options import Options
    from ringproof.proofs.ring.prover import verify
    from ringproof.proofs.results import Verdict

    results = verify(registry()["ring-attention"], Options(properties=("coverage",)))
    cites = {r.phase: "online softmax: fold step" in r.solver["lemmas"] for r in results}
    assert cites == {"ring.MAC": False, "ring.MAX": False, "ring.EAC1": True, "ring.EAC2": True, "out": True}
    assert {r.verdict for r in results} == {Verdict.PROVED}
    assert all("online softmax: final division" in r.solver["lemmas"] for r in results if cites[r.phase])


def test_a_coverage_resting_on_an_unproved_part_of_the_lemma_is_unknown(monkeypatch):
    from ringproof.proofs.cli.targets import registry
    from ringproof.proofs.cp import online_softmax
    from ringproof.proofs.options import Options
    from ringproof.proofs.ring.prover import verify
    from ringproof.proofs.results import Verdict

    monkeypatch.setattr(online_softmax, "cited", lambda: {"online softmax: fold step": False,
                                                         "online softmax: final division": True})
    results = verify(registry()["ring-attention"], Options(properties=("coverage",)))
    verdicts = {r.phase: r.verdict for r in results}
    assert verdicts["ring.EAC2"] is Verdict.UNKNOWN and verdicts["ring.MAX"] is Verdict.PROVED

