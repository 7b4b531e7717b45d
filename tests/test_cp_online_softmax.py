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
