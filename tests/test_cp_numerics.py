"""Numerics of the context-parallel targets on the ring model: against numpy (float64) at every size
simulated (the forward's y, by online softmax, against softmax attention itself), and against
PyTorch's scaled_dot_product_attention and autograd for several (n, d, m, heads)."""

import math

import numpy as np
import pytest

from ringproof.model.ring.machine import computed, run
from ringproof.model.ring.reference import attention, random_inputs
from ringproof.proofs.cli.targets import registry
from ringproof.schedules.context_parallel import SCHEDULES


@pytest.mark.parametrize("name", [*SCHEDULES, *(f"{n}-bwd" for n in SCHEDULES)])
def test_the_ring_model_matches_numpy_at_every_size(name):
    schedule = registry()[name]
    cp = SCHEDULES[name.removesuffix("-bwd")]
    ran = 0
    for m in range(1, 5):
        for n in range(cp.unit(m), 12 + 1, cp.unit(m)):
            for d in (m, 2 * m):
                r = run(schedule, n, m, d=d)
                assert r.ok and r.max_rel_error < 1e-12, (name, n, d, m, r.violations, r.max_rel_error)
                ran += 1
    assert ran >= 10


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_the_forward_by_online_softmax_is_softmax_attention_at_every_size(name):
    """y = o / l of the ring (running max, rescaled sums) against numpy's softmax(q kᵀ) v, float64,
    unscaled and with 1/√d, at every size simulated."""
    schedule = registry()[name]
    cp = SCHEDULES[name]
    for m in range(1, 5):
        for n in range(cp.unit(m), 12 + 1, cp.unit(m)):
            for d in (m, 2 * m):
                inputs = random_inputs(schedule.problem, n, d, seed=n * 31 + m)
                for scale in (1.0, 1 / math.sqrt(d)):
                    (y,) = _ring(schedule, n, m, d, inputs, ["y"], scale)
                    want = attention(inputs["q"], inputs["k"], inputs["v"], masked=cp.causal, scale=scale)
                    assert np.allclose(y, want, rtol=1e-12, atol=1e-13), (name, n, d, m, scale)


def _ring(schedule, n, m, d, inputs, arrays, scale=1.0):
    """The arrays the ring computes from `inputs` (every output, not only the first)."""
    num = computed(schedule, n, m, inputs, d, scale)
    return [num.output(schedule.problem, _array(schedule.problem, a)) for a in arrays]


def _array(problem, a):
    return next(e.target for e in problem.equations if e.target.name == a) if isinstance(a, str) else a


SHAPES = [(8, 4, 2, 1), (12, 6, 3, 2), (16, 8, 4, 3), (8, 8, 4, 2)]      # (n, d, m, heads)


@pytest.mark.parametrize("name", list(SCHEDULES))
@pytest.mark.parametrize("n, d, m, heads", SHAPES)
def test_the_forward_matches_torch_sdpa(name, n, d, m, heads):
    torch = pytest.importorskip("torch", reason="PyTorch is an optional extra: pip install -e .[torch]")
    cp = SCHEDULES[name]
    if not cp.valid(n, m):
        pytest.skip(f"{name} needs {cp.requires_text}")
    schedule = registry()[name]
    rng = np.random.default_rng(n * 100 + m)
    q, k, v = (rng.uniform(-1, 1, size=(heads, n, d)) for _ in range(3))
    scale = 1 / math.sqrt(d)
    out = []
    for h in range(heads):       # heads share no data: one ring run each
        (y,) = _ring(schedule, n, m, d, {"q": q[h], "k": k[h], "v": v[h]}, ["y"], scale)
        out.append(y)
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(x) for x in (q, k, v)), is_causal=cp.causal).numpy()
    assert np.allclose(np.stack(out), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(SCHEDULES))
@pytest.mark.parametrize("n, d, m, heads", SHAPES)
def test_the_backward_ring_matches_autograd(name, n, d, m, heads):
    """dS = P∘(dP − D) with D = rowsum(dO∘O), scaled, fed to the ring: dq, dk, dv as autograd's."""
    torch = pytest.importorskip("torch", reason="PyTorch is an optional extra: pip install -e .[torch]")
    cp = SCHEDULES[name]
    if not cp.valid(n, m):
        pytest.skip(f"{name} needs {cp.requires_text}")
    schedule = registry()[f"{name}-bwd"]
    g = torch.Generator().manual_seed(n * 100 + m)
    q, k, v, do = (torch.rand(heads, n, d, generator=g, dtype=torch.float64) * 2 - 1 for _ in range(4))
    scale = 1 / math.sqrt(d)
    leaves = [x.clone().requires_grad_(True) for x in (q, k, v)]
    o = torch.nn.functional.scaled_dot_product_attention(*leaves, is_causal=cp.causal)
    o.backward(do)
    s = q @ k.transpose(-1, -2) * scale
    if cp.causal:
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), -torch.inf)
    p = torch.softmax(s, dim=-1)
    dp = do @ v.transpose(-1, -2)
    ds = p * (dp - (do * o.detach()).sum(-1, keepdim=True))
    for h in range(heads):
        got = _ring(schedule, n, m, d, {"ds": (ds[h] * scale).numpy(), "p": p[h].numpy(), "q": q[h].numpy(),
                                        "k": k[h].numpy(), "g": do[h].numpy()},
                    [e.target for e in schedule.problem.equations])
        for mine, leaf in zip(got, leaves):
            assert np.allclose(mine, leaf.grad[h].numpy(), rtol=1e-10, atol=1e-12)


def test_the_public_execute_runs_a_lock_step_group_as_the_ring_does():
    """`ringproof.execute` on a fused forward (phases of one lock-step group): run one phase after
    another, the sums would read a running max that its partner has not yet made."""
    from ringproof import execute
    from ringproof.model.ring.trace import build_trace
    schedule = registry()["zigzag"]
    assert any(p.group is not None for p in schedule.phases)
    n, m, d = 8, 2, 4
    inputs = random_inputs(schedule.problem, n, d, seed=5)
    y = execute(build_trace(schedule, n, m, d), inputs)
    assert np.allclose(y, attention(inputs["q"], inputs["k"], inputs["v"], masked=True), rtol=1e-12, atol=1e-13)
