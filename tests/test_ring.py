"""The ring model against numpy attention, and its machine-rule checks."""

from dataclasses import replace

import pytest

from ringproof.model.ring.machine import run
from ringproof.model.ring.reference import attention
from ringproof.schedules.algo1 import ALGO1
from ringproof.schedules.dsl import Move
from ringproof.errors import BadInput


@pytest.mark.parametrize("n,m", [(1, 1), (3, 3), (4, 2), (6, 3), (6, 6), (8, 4), (12, 3), (15, 5)])
@pytest.mark.parametrize("seed", [0, 1])
def test_algo1_matches_numpy(n, m, seed):
    r = run(ALGO1, n, m, seed=seed)
    assert r.violations == []
    assert r.max_rel_error <= 1e-9
    assert r.cycles == (2 * n**3 + 2 * n**2) // m
    assert r.ops == {"MAC": 2 * n**3, "EAC": n * n, "DIV": n * n, "MOVE": 0}
    assert r.utilization == 1.0


def test_reference_masked_ignores_the_upper_triangle():
    import numpy as np
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(4, 4)) for _ in range(3))
    k2 = k.copy()
    k2[3] += 100.0            # key 4 only matters to row 4
    a, b = attention(q, k, v, masked=True), attention(q, k2, v, masked=True)
    assert np.allclose(a[:3], b[:3]) and not np.allclose(a[3], b[3])


def test_a_missing_send_is_a_machine_violation():
    p1 = ALGO1.phase("phase1")

    def step(P, ix):
        st = p1.step(P, ix)
        return replace(st, send=None)

    broken = replace(ALGO1, phases=(replace(p1, step=step),) + ALGO1.phases[1:])
    r = run(broken, 4, 2)
    assert any(v.rule == "ring-locality" for v in r.violations)
    assert not r.ok


def test_send_semantics_move_vs_copy():
    p1 = ALGO1.phase("phase1")

    def step(P, ix):                       # moving the finished sum away breaks phase 2
        st = p1.step(P, ix)
        return replace(st, send=Move(st.target))

    r = run(replace(ALGO1, phases=(replace(p1, step=step),) + ALGO1.phases[1:]), 4, 2)
    assert any("w1" in v.message for v in r.violations)


@pytest.mark.parametrize("n,m", [(0, 1), (3, 2), (-2, 1)])
def test_bad_sizes(n, m):
    with pytest.raises(BadInput):
        run(ALGO1, n, m)


def test_first_difference_names_the_first_wrong_or_missing_entry():
    import numpy as np
    from ringproof.model.ring.numerics import describe_difference, first_difference

    ref = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert first_difference("y", ref.copy(), ref) is None
    assert first_difference("y", ref + 1e-12, ref) is None                 # within the tolerance
    wrong = ref.copy()
    wrong[1, 0], wrong[1, 1] = np.nan, 9.0
    diff = first_difference("y", wrong, ref)
    assert diff == {"output": "y", "index": [2, 1], "got": None, "expected": 3.0}
    assert describe_difference(diff) == "y[2, 1] never computed (numpy: 3)"
    wrong[1, 0] = 3.0
    assert describe_difference(first_difference("y", wrong, ref)) == "y[2, 2] = 9 (numpy: 4)"


def test_a_wrong_run_names_its_first_wrong_entry():
    """A schedule that never computes a row says which entry, not only an infinite error."""
    from ringproof.schedules.algo1 import ALGO1_PRINTED

    assert run(ALGO1, 4, 2).difference is None
    r = run(ALGO1_PRINTED, 4, 2)
    assert not r.ok and r.difference is not None and r.difference["output"] == "y"
    assert len(r.difference["index"]) == 2 and all(1 <= i <= 4 for i in r.difference["index"])
