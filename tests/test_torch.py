"""The ring model's output against PyTorch's scaled_dot_product_attention: plain, causal and
symmetric, several heads, with the paper's scale (1) and the usual 1/√d."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is an optional extra: pip install -e .[torch]")
sdpa = torch.nn.functional.scaled_dot_product_attention

from ringproof.model.ring.numerics import execute  # noqa: E402
from ringproof.model.ring.trace import build_trace  # noqa: E402
from ringproof.schedules.algo1 import ALGO1_GENERAL  # noqa: E402
from ringproof.schedules.algo2 import ALGO2_GENERAL  # noqa: E402
from ringproof.schedules.algo3 import ALGO3_GENERAL  # noqa: E402

HEADS, N, D, M = 3, 8, 4, 2


def _heads(schedule, names, scale):
    """y of every head, each head one run of the schedule on its own slices (heads share no data)."""
    rng = np.random.default_rng(1)
    data = {x: rng.uniform(-1, 1, size=(HEADS, N, D)) for x in names}
    trace = build_trace(schedule, N, M, D)
    ring = np.stack([execute(trace, {x: data[x][h] for x in names}, scale) for h in range(HEADS)])
    return data, ring


@pytest.mark.parametrize("scaled", [False, True], ids=["paper-scale-1", "sdpa-scale"])
@pytest.mark.parametrize("schedule,causal", [(ALGO1_GENERAL, False), (ALGO3_GENERAL, True)],
                         ids=["plain", "causal"])
def test_ring_matches_torch_sdpa(schedule, causal, scaled):
    scale = 1 / math.sqrt(D) if scaled else 1.0
    data, ring = _heads(schedule, ("q", "k", "v"), scale)
    q, k, v = (torch.from_numpy(data[x]) for x in ("q", "k", "v"))
    want = sdpa(q, k, v, is_causal=causal, scale=None if scaled else 1.0).numpy()
    assert np.allclose(ring, want, rtol=1e-12, atol=1e-12)


def test_symmetric_ring_matches_torch_sdpa():
    data, ring = _heads(ALGO2_GENERAL, ("x",), 1.0)
    x = torch.from_numpy(data["x"])
    assert np.allclose(ring, sdpa(x, x, x, scale=1.0).numpy(), rtol=1e-12, atol=1e-12)


def test_the_scale_matters():
    """The paper's unscaled softmax and torch's default (1/√d) differ: the option is not a no-op."""
    data, ring = _heads(ALGO1_GENERAL, ("q", "k", "v"), 1.0)
    q, k, v = (torch.from_numpy(data[x]) for x in ("q", "k", "v"))
    assert not np.allclose(ring, sdpa(q, k, v).numpy(), rtol=1e-6, atol=1e-6)
