"""`prove conform TARGET --impl torch`: PyTorch's own ring attention (its `_templated_ring_attention`
and backward, with a recording exact CPU attention op) on a gloo process group, under both rotate
methods, held against the targets' schedules, SDPA and autograd. Needs the [cp] extra."""

import io

import pytest

torch = pytest.importorskip("torch", reason="the [cp] extra is not installed: pip install -e .[cp]")

from ringproof.proofs.cli.main import main  # noqa: E402
from ringproof.proofs.cp import torch_ring  # noqa: E402
from ringproof.schedules.context_parallel import SCHEDULES  # noqa: E402


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["conform", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("target, sizes", [("ring-attention", ("2", "4")), ("ring-attention-causal", ("2", "4")),
                                           ("zigzag", ("2,3", "12"))])
def test_pytorch_conforms_under_both_rotate_methods(target, sizes):
    code, out, err = _cli(target, "--impl", "torch", "--world-sizes", sizes[0], "-n", sizes[1], "--timeout", "60")
    assert code == 0, out + err
    for m in sizes[0].split(","):
        assert f"rotate allgather, world size {m}, n = {sizes[1]}" in out
        assert f"rotate alltoall, world size {m}, n = {sizes[1]}" in out
    # the all-gather rotater is no ring transfer of K/V: said, not passed off as ring-local
    assert f"K/V all-gathered (1 all-gather of all {sizes[0][0]} blocks per pass on every rank" in out
    assert "ring-local: K/V and dK/dV sent to rank (r + 1) mod m only" in out
    assert "conforms at every size run: rotate allgather, alltoall" in out


def test_a_wrong_causal_mask_in_the_op_is_the_first_difference(monkeypatch):
    strict = lambda lq, lk, causal: (torch.arange(lk)[None, :] < torch.arange(lq)[:, None]) if causal \
        else torch.ones(lq, lk, dtype=torch.bool)                                           # noqa: E731
    monkeypatch.setattr(torch_ring, "allowed_mask", strict)      # the forked ranks inherit it
    code, out, _ = _cli("zigzag", "--impl", "torch", "--rotate", "alltoall", "--world-sizes", "2", "-n", "4")
    assert code == 1
    assert ("differs: rotate alltoall, world size 2, n=4: forward: rank 0 never computes (query 0, key 0) "
            "at ring step 0, as the schedule does") in out, out


def test_a_layout_pytorch_does_not_compute_on_is_a_difference_before_any_run(monkeypatch):
    assert torch_ring.layout_difference(SCHEDULES["zigzag"], 8, 2) is None
    monkeypatch.setitem(torch_ring.TARGETS, "ring-attention-causal", True)
    why = torch_ring.layout_difference(SCHEDULES["ring-attention-causal"], 8, 2)
    assert why.startswith("the layout of ring-attention-causal is not _HeadTailLoadBalancer's indices: slot 2 (rank 0) holds token 2 there, 6 in PyTorch's")
    code, out, _ = _cli("ring-attention-causal", "--impl", "torch", "--world-sizes", "2", "-n", "8")
    assert code == 1 and "differs: world size 2, n=8: the layout of" in out, out


def test_bad_input_is_one_line_exit_64(monkeypatch):
    for argv in (("striped", "--impl", "torch"), ("zigzag", "--impl", "ring-flash-attn", "--rotate", "alltoall"),
                 ("zigzag", "--impl", "torch", "--rotate", "ring"), ("zigzag", "--impl", "torch", "-n", "6",
                                                                     "--world-sizes", "2"),
                 ("zigzag-varlen", "--impl", "torch"), ("zigzag", "--impl", "torch", "--json")):
        code, _, err = _cli(*argv, "--world-sizes", "2") if "--world-sizes" not in argv else _cli(*argv)
        assert code == 64 and len(err.strip().splitlines()) == 1, (argv, err)
    monkeypatch.setattr(torch_ring, "MODULE", "no_such_torch_module_xyz")
    code, _, err = _cli("zigzag", "--impl", "torch", "--world-sizes", "2")
    assert code == 64 and "pip install -e '.[cp]'" in err and len(err.strip().splitlines()) == 1, err
