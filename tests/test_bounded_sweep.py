"""The bounded sweep's bookkeeping and the quick tests its twins run before they sort."""

import numpy as np
import pytest

from ringproof.model.ring.trace import build_trace
from ringproof.proofs.ring.bounded import enumerated_counts, shapes, sweep
from ringproof.proofs.ring.properties import no_conflict
from ringproof.proofs.ring.properties.base import any_repeated, any_shared
from ringproof.proofs.ring.properties.running_sums import _shared_values
from ringproof.schedules.algo1 import ALGO1
from ringproof.schedules.algo3 import ALGO3


@pytest.mark.parametrize("spread", [10, 10**9])          # bincount, and sort when the range is wide
def test_repeat_and_share_tests_agree_with_unique(spread):
    rng = np.random.default_rng(spread)
    for size in (0, 1, 2, 5, 50, 400):
        a = rng.integers(-spread, spread, size)
        b = rng.integers(-spread, spread, size // 2 + 1)
        assert any_repeated(a) == (np.unique(a).size < a.size)
        assert any_shared(a, b) == (np.intersect1d(a, b).size > 0)
        assert any_shared(a, a) == (a.size > 0)


def test_shared_values_are_those_of_unique_and_intersect():
    assert _shared_values(np.array([4, 1, 4, 7, 1]), None).tolist() == [1, 4]
    assert _shared_values(np.array([4, 1, 7]), None).size == 0
    assert _shared_values(np.array([4, 1, 7]), np.array([9, 7, 4])).tolist() == [4, 7]
    assert _shared_values(np.array([4, 1, 7]), np.array([9, 8])).size == 0


@pytest.mark.parametrize("what", ["PE", "target"])
@pytest.mark.parametrize("n,m", [(6, 3), (12, 12)])           # column pairs, and a sort of each row
def test_a_clash_in_one_cycle_is_named_by_its_first_pair(what, n, m):
    trace = build_trace(ALGO1, n, m)
    pt = trace.phases[0]
    assert no_conflict.concrete(trace, 0, pt, 1) == []
    field = "pe" if what == "PE" else "target"
    col = getattr(pt, field).copy()
    a, b = m + 1, 2 * m - 1               # cycle 1 holds positions m .. 2m - 1
    col[a] = col[b]
    setattr(pt, field, col)
    (f,) = no_conflict.concrete(trace, 0, pt, 1)
    assert what in f.message
    assert [it["l"] for it in f.iterations] == [pt.index["l"][a], pt.index["l"][b]]


@pytest.mark.parametrize("schedule", [ALGO1, ALGO3])
def test_the_sweep_counts_each_size_as_its_trace(schedule):
    swept = sweep(schedule, 8, jobs=2)
    assert set(swept.counts) == set(shapes(schedule, 8))
    for nmd, got in swept.counts.items():
        assert got == enumerated_counts(build_trace(schedule, *nmd))
        assert got["cycles"] > 0 and sum(got["ops"].values()) > 0
        n, m, _ = nmd
        if schedule is ALGO1:
            assert got["cycles"] == 2 * n * n * (n + 1) // m
