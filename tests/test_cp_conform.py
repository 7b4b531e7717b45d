"""`prove conform`: real ring-attention code run on a gloo process group with recording CPU kernels,
held against the targets' schedules, SDPA and autograd. Needs the [cp] extra (torch; ring-flash-attn
for the library's own runs)."""

import importlib.util
import io
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the [cp] extra is not installed: pip install -e .[cp]")

from ringproof.errors import BadInput  # noqa: E402
from ringproof.proofs.cli.main import main  # noqa: E402
from ringproof.proofs.cp import kernels  # noqa: E402
from ringproof.proofs.cp.conform import Setup, conform, load_implementation  # noqa: E402
from ringproof.schedules.context_parallel import SCHEDULES  # noqa: E402

OURS = str(Path(__file__).parent / "cp_ring.py")
needs_library = pytest.mark.skipif(importlib.util.find_spec("ring_flash_attn") is None,
                                   reason="ring-flash-attn is not installed: pip install -e .[cp]")


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["conform", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("causal, lq, lk", [(False, 3, 5), (True, 4, 4), (True, 2, 5), (True, 4, 2)])
def test_the_stand_ins_are_exact_attention_and_its_gradients(causal, lq, lk):
    g = torch.Generator().manual_seed(3)
    q, do = (torch.rand(1, lq, 2, 4, generator=g, dtype=torch.float64) for _ in range(2))
    k, v = (torch.rand(1, lk, 2, 4, generator=g, dtype=torch.float64) for _ in range(2))
    kernels.RECORDER.start(q, k)
    out, lse, _, _ = kernels.flash_attn_forward(q, k, v, 0.0, 0.7, causal)
    grads = [torch.empty_like(x) for x in (q, k, v)]
    kernels.flash_attn_backward(do, q, k, v, out, lse, *grads, 0.0, 0.7, causal)
    ref = [x.transpose(1, 2).clone().requires_grad_(True) for x in (q, k, v)]
    # flash-attn's causal mask for Lq ≠ Lk is aligned to the bottom right: key j ≤ i + Lk − Lq
    mask = torch.arange(lk)[None, :] <= torch.arange(lq)[:, None] + (lk - lq) if causal else None
    rows = mask.any(-1) if causal else torch.ones(lq, dtype=torch.bool)
    o = torch.nn.functional.scaled_dot_product_attention(*ref, attn_mask=mask, scale=0.7)
    o = torch.where(rows[None, None, :, None], o, 0.0)
    o.backward(do.transpose(1, 2))
    assert torch.allclose(out, o.transpose(1, 2), atol=1e-12)
    for got, r in zip(grads, ref):
        assert torch.allclose(got, r.grad.transpose(1, 2), atol=1e-6)   # lse is float32, as flash-attn's
    call = kernels.RECORDER.calls[-1]
    assert call.queries == tuple(range(lq)) and call.keys == tuple(range(lk))
    assert len(list(call.pairs())) == int(mask.sum()) if causal else lq * lk


def test_our_zigzag_conforms_and_talks_to_no_one_at_world_size_1():
    code, out, err = _cli("zigzag", "--impl", f"{OURS}:zigzag", "--world-sizes", "1,2")
    assert code == 0, out + err
    assert "world size 2, n = 32" in out and "conforms" in out


@pytest.mark.parametrize("mutant, says", [
    ("wrong_pairing", "forward: rank 1 never computes (query 1, key 0) at ring step 1"),
    ("mask_off_by_one", "forward: rank 1 never computes (query 1, key 0) at ring step 1"),
    ("no_return_hop", "dk of token 0 on rank 0 differs from autograd"),
    ("no_rescale", "out of token 3 on rank 0 differs from scaled_dot_product_attention"),
])
def test_mutants_are_refuted_at_the_smallest_size(mutant, says):
    code, out, _ = _cli("zigzag", "--impl", f"{OURS}:{mutant}", "--world-sizes", "1,2,3")
    assert code == 1
    assert f"differs: world size 2, n=4: {says}" in out, out


def test_an_extra_pair_names_the_mask():
    cp = SCHEDULES["zigzag"]
    fn = load_implementation(f"{OURS}:wrong_pairing", cp)
    result = conform(cp, fn, "ours", [2], [4], Setup())
    assert result.difference.what == "forward"
    # the wrong chunk also computes query 1 with key 3, which the mask excludes; the missing pair
    # comes first in (step, rank, query, key) order
    assert (result.difference.rank, result.difference.step, result.difference.tokens) == (1, 1, (1, 0))


def test_implementations_that_cannot_be_loaded_are_bad_input(tmp_path, monkeypatch):
    for impl in ("no_such_module_xyz:f", f"{OURS}:missing", "nocolon"):
        code, _, err = _cli("zigzag", "--impl", impl, "--world-sizes", "2")
        assert code == 64 and len(err.strip().splitlines()) == 1, err
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(BadInput, match="ring-flash-attn is not installed"):
        load_implementation("ring-flash-attn", SCHEDULES["zigzag"])


def test_no_valid_size_is_bad_input():
    code, _, err = _cli("zigzag", "--impl", f"{OURS}:zigzag", "--world-sizes", "2", "-n", "6")
    assert code == 64 and "2m | n" in err


@needs_library
def test_ring_flash_attn_zigzag_and_striped_conform():
    for target in ("zigzag", "striped"):
        code, out, err = _cli(target, "--impl", "ring-flash-attn", "--world-sizes", "2,3")
        assert code == 0, out + err


@needs_library
def test_ring_flash_attn_at_world_size_1_sends_to_itself_in_the_backward():
    code, out, _ = _cli("zigzag", "--impl", "ring-flash-attn", "--world-sizes", "1")
    assert code == 1 and "rank 0 in the backward pass raised" in out and "sent to rank 0 (itself)" in out


@needs_library
def test_ring_flash_attn_ring_returns_dq_in_bfloat16():
    """Its ring backward rounds dq to bfloat16 whatever the input dtype: float16 runs see it."""
    code, out, _ = _cli("ring-attention", "--impl", "ring-flash-attn", "--world-sizes", "2")
    assert code == 1 and "dq of token" in out
    code, out, _ = _cli("ring-attention", "--impl", "ring-flash-attn", "--world-sizes", "2", "--dtype", "bfloat16")
    assert code == 0, out


@needs_library
@pytest.mark.slow
def test_the_issue_figure_zigzag_at_world_sizes_2_3_4():
    code, out, _ = _cli("zigzag", "--impl", "ring-flash-attn", "--world-sizes", "2,3,4")
    assert code == 0, out


def test_a_rank_that_dies_is_a_difference_naming_its_exit_code(tmp_path):
    path = tmp_path / "dies.py"
    path.write_text("import os\nimport torch.distributed as dist\n\n"
                    "def func(q, k, v, causal=True, **kwargs):\n"
                    "    if dist.get_rank() == 1:\n        os._exit(3)\n    return q * 1\n")
    code, out, _ = _cli("zigzag", "--impl", f"{path}:func", "--world-sizes", "2", "--timeout", "30")
    assert code == 1 and "rank 1 ended without a report (exit code 3)" in out, out


def test_a_world_size_with_no_answer_in_the_timeout_is_unknown(tmp_path):
    """Exit 2, never 0: a rank that hangs leaves the world size without an answer."""
    path = tmp_path / "hangs.py"
    path.write_text("import time\n\ndef func(q, k, v, causal=True, **kwargs):\n    time.sleep(60)\n    return q * 1\n")
    code, out, _ = _cli("zigzag", "--impl", f"{path}:func", "--world-sizes", "2", "-n", "4", "--timeout", "1")
    assert code == 2 and "no answer" in out, out
