"""`prove conform TARGET --impl torch`: PyTorch's own ring attention (its `_templated_ring_attention`
and backward, with a recording exact CPU attention op) on a gloo process group, under both rotate
methods, held against the targets' schedules, SDPA and autograd. Needs the [cp] extra."""

import io
import json
from pathlib import Path

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


SCHEMA = Path(__file__).parent.parent / "docs" / "json-schemas" / "conform.json"


def _document(out):
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(out, parse_constant=lambda token: pytest.fail(f"non-strict JSON {token}"))
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    return doc


def test_json_has_ring_flash_attns_shape_with_the_rotate_methods(monkeypatch):
    code, out, err = _cli("zigzag", "--impl", "torch", "--world-sizes", "2", "-n", "4", "--json")
    assert code == 0, out + err
    doc = _document(out)
    assert doc["verdict"] == "conforms" and doc["impl"] == "torch" and doc["rotate"] == ["allgather", "alltoall"]
    assert [(r["rotate"], r["world_size"], r["n"], r["lengths"]) for r in doc["runs"]] == \
        [("allgather", 2, 4, None), ("alltoall", 2, 4, None)]
    assert doc["runs"][0]["communication"].startswith("K/V all-gathered (1 all-gather of all 2 blocks")
    assert doc["runs"][1]["communication"].startswith("ring-local")
    # the same keys as ring-flash-attn's document, in every run and at the top
    _, theirs, _ = _cli("zigzag", "--impl", "ring-flash-attn", "--world-sizes", "2", "-n", "4", "--json")
    ring = _document(theirs)
    assert set(ring) <= set(doc) and set(ring["runs"][0]) <= set(doc["runs"][0])
    # a difference (here the layout, found before any run) and its exit code
    monkeypatch.setitem(torch_ring.TARGETS, "ring-attention-causal", True)
    code, out, _ = _cli("ring-attention-causal", "--impl", "torch", "--world-sizes", "2", "-n", "8", "--json")
    doc = _document(out)
    assert code == 1 and doc["verdict"] == "differs" and doc["runs"] == []
    assert doc["difference"]["what"] == "layout" and doc["difference"]["rotate"] is None
    assert doc["difference"]["text"].startswith("world size 2, n=8: the layout of ring-attention-causal is not")


def test_bad_input_is_one_line_exit_64(monkeypatch):
    for argv in (("striped", "--impl", "torch"), ("zigzag", "--impl", "ring-flash-attn", "--rotate", "alltoall"),
                 ("zigzag", "--impl", "torch", "--rotate", "ring"), ("zigzag", "--impl", "torch", "-n", "6",
                                                                     "--world-sizes", "2"),
                 ("zigzag-varlen", "--impl", "torch"), ("llama3-varlen", "--impl", "torch"),
                 ("zigzag", "--impl", "torch", "-n", "6", "--world-sizes", "2", "--json")):
        code, _, err = _cli(*argv, "--world-sizes", "2") if "--world-sizes" not in argv else _cli(*argv)
        assert code == 64 and len(err.strip().splitlines()) == 1, (argv, err)
    monkeypatch.setattr(torch_ring, "MODULE", "no_such_torch_module_xyz")
    code, _, err = _cli("zigzag", "--impl", "torch", "--world-sizes", "2")
    assert code == 64 and "pip install -e '.[cp]'" in err and len(err.strip().splitlines()) == 1, err
