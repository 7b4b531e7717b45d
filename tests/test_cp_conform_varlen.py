"""`prove conform` on packed sequences: ring-flash-attn's varlen functions run on a gloo process
group with recording stand-ins of flash-attn's varlen kernels, held against the varlen rows of
schedules/documents.py and SDPA per document; lengths outside the side condition refused before any
run; `--json`. Needs the [cp] extra (torch; ring-flash-attn for the library's own runs)."""

import importlib.util
import io
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the [cp] extra is not installed: pip install -e .[cp]")

from ringproof.errors import BadInput  # noqa: E402
from ringproof.proofs.cli.main import main  # noqa: E402
from ringproof.proofs.cp import kernels  # noqa: E402
from ringproof.proofs.cp.conform import Packed, varlen_plan  # noqa: E402
from ringproof.schedules.documents import VARLEN  # noqa: E402

MUTANTS = str(Path(__file__).parent / "cp_varlen.py")
SCHEMA = Path(__file__).parent.parent / "docs" / "json-schemas" / "conform.json"
needs_library = pytest.mark.skipif(importlib.util.find_spec("ring_flash_attn") is None,
                                   reason="ring-flash-attn is not installed: pip install -e .[cp]")


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["conform", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("causal, cu_q, cu_k", [
    (True, [0, 2, 5], [0, 2, 5]),          # two sequences of equal q and k lengths
    (True, [0, 1, 3], [0, 2, 5]),          # shorter queries: the bottom-right mask of each sequence
    (False, [0, 3, 4], [0, 1, 5]),
])
def test_the_varlen_stand_ins_are_attention_per_sequence(causal, cu_q, cu_k):
    g = torch.Generator().manual_seed(5)
    q, do = (torch.rand(cu_q[-1], 2, 4, generator=g, dtype=torch.float64) for _ in range(2))
    k, v = (torch.rand(cu_k[-1], 2, 4, generator=g, dtype=torch.float64) for _ in range(2))
    kernels.RECORDER.start(q[None], k[None])
    kernels.RECORDER.calls.clear()
    cq, ck = torch.tensor(cu_q), torch.tensor(cu_k)
    out, lse, _, _ = kernels.flash_attn_varlen_forward(q, k, v, cq, ck, 3, 4, 0.0, 0.7, causal)
    assert lse.shape == (2, cu_q[-1])                   # flash-attn ≥ 2.6: (heads, total_q)
    grads = [torch.empty_like(x) for x in (q, k, v)]
    kernels.flash_attn_varlen_backward(do, q, k, v, out, lse, *grads, cq, ck, 3, 4, 0.0, 0.7, causal)
    for b in range(len(cu_q) - 1):
        rows, keys = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        lq, lk = rows.stop - rows.start, keys.stop - keys.start
        ref = [x[None, s].transpose(1, 2).clone().requires_grad_(True) for x, s in ((q, rows), (k, keys), (v, keys))]
        mask = torch.arange(lk)[None, :] <= torch.arange(lq)[:, None] + (lk - lq) if causal else None
        o = torch.nn.functional.scaled_dot_product_attention(*ref, attn_mask=mask, scale=0.7)
        o.backward(do[None, rows].transpose(1, 2))
        assert torch.allclose(out[rows], o[0].transpose(0, 1), atol=1e-12)
        for got, r, s in zip(grads, ref, (rows, keys, keys)):
            assert torch.allclose(got[s], r.grad[0].transpose(0, 1), atol=1e-6)
    # one recorded call per sequence, forward and backward, of its own rows
    calls = kernels.RECORDER.calls
    assert len(calls) == 2 * (len(cu_q) - 1)
    assert calls[1].queries == tuple(range(cu_q[1], cu_q[2])) and calls[1].keys == tuple(range(cu_k[1], cu_k[2]))


@pytest.mark.parametrize("cu_q, max_q, says", [
    ([0, 2, 7], 5, "does not cut the 5 rows"),         # past the rows given: flash-attn reads outside them
    ([0, 3, 2], 5, "does not cut"),
    ([0, 4, 5], 3, "beyond max_seqlen_q = 3"),         # flash-attn would leave rows uncomputed
])
def test_the_varlen_stand_ins_refuse_what_the_real_kernel_would_get_wrong_silently(cu_q, max_q, says):
    q = k = v = torch.rand(5, 1, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match=says):
        kernels.flash_attn_varlen_forward(q, k, v, torch.tensor(cu_q), torch.tensor([0, 2, 5]), max_q, 5,
                                          0.0, 1.0, True)


@pytest.mark.parametrize("name, lengths, m", [("zigzag-varlen", (4, 8, 4), 2), ("ring-attention-varlen", (3, 6), 3)])
def test_the_expected_pairs_are_the_document_causal_pairs_once(name, lengths, m):
    case = Packed(VARLEN[name], lengths, m)
    pairs = case.expected()
    seen = [(q, k) for _, _, q, k in pairs]
    assert len(seen) == len(set(seen)) == sum(length * (length + 1) // 2 for length in lengths)
    assert all(case.doc[q] == case.doc[k] and k <= q for q, k in seen)


def test_random_vectors_meet_the_side_condition_and_follow_the_seed():
    v = VARLEN["zigzag-varlen"]
    plan, skipped = varlen_plan(v, [2, 3, 4], [(4, 8, 4)], vectors=4, seed=7)
    assert [m for m, _ in plan] == [2, 3, 4] and skipped == [((4, 8, 4), 3), ((4, 8, 4), 4)]
    assert plan[0][1][0] == (4, 8, 4) and len(plan[0][1]) == 5 and len(plan[1][1]) == len(plan[2][1]) == 4
    assert all(v.valid(lengths, m) for m, vectors in plan for lengths in vectors)
    assert any(len(lengths) > 1 for _, vectors in plan for lengths in vectors)
    assert varlen_plan(v, [2, 3, 4], [(4, 8, 4)], vectors=4, seed=7)[0] == plan
    assert varlen_plan(v, [2, 3, 4], [(4, 8, 4)], vectors=4, seed=8)[0] != plan


@pytest.mark.parametrize("argv, says", [
    (["zigzag-varlen", "--lengths", "4,6", "--world-sizes", "2"],
     "zigzag-varlen needs 2m | L_i for every document i (the library checks none of it), and document 2 has "
     "length 6, not a multiple of 4 at world size 2"),
    (["ring-attention-varlen", "--lengths", "4,8,4", "--lengths", "3,6", "--world-sizes", "2,4"],
     "--lengths 3,6: ring-attention-varlen needs m | L_i for every document i"),
    (["zigzag-varlen-padded", "--lengths", "3,5"], "ring-flash-attn has no padded varlen path"),
    (["zigzag-varlen", "-n", "8"], "-n is for single-sequence targets"),
    (["zigzag", "--lengths", "4"], "--lengths and --vectors are for the varlen targets"),
    (["zigzag-varlen", "--lengths", "4,x"], "expected comma-separated positive integers"),
    (["zigzag-varlen", "--lengths", "256,260"], "516 tokens, at most 512"),
    (["zigzag-varlen", "--vectors", "0"], "no lengths vector to run"),
    (["zigzag-varlen", "--world-sizes", "17"], "at most 16 processes"),
])
def test_bad_input_is_one_line_before_any_run(argv, says):
    code, out, err = _cli(*argv, "--impl", "ring-flash-attn")
    assert code == 64 and out == "" and len(err.strip().splitlines()) == 1, err
    assert says in err, err


@needs_library
def test_ring_flash_attn_varlen_conforms_on_every_vector_run():
    code, out, err = _cli("zigzag-varlen", "--impl", "ring-flash-attn", "--world-sizes", "2,3",
                          "--lengths", "4,8,4", "--vectors", "1")
    assert code == 0, out + err
    assert "world size 2, lengths 4,8,4: 24 kernel calls" in out
    assert "not run: lengths 4,8,4 at world size 3" in out
    assert "conforms at every world size and lengths vector run: 3 vectors at world sizes 2, 3" in out
    code, out, err = _cli("ring-attention-varlen", "--impl", "ring-flash-attn", "--world-sizes", "2,3",
                          "--lengths", "6,12", "--dtype", "bfloat16")
    assert code == 0, out + err
    code, out, err = _cli("zigzag-varlen-bwd", "--impl", "ring-flash-attn", "--world-sizes", "2", "--lengths", "4,8")
    assert code == 0 and "1 vector at world size 2" in out, out + err


@needs_library
def test_ring_flash_attn_ring_varlen_returns_dq_in_bfloat16():
    """ring_flash_attn_varlen_backward, as the single-sequence one, rounds dq to bfloat16."""
    code, out, _ = _cli("ring-attention-varlen", "--impl", "ring-flash-attn", "--world-sizes", "2",
                        "--lengths", "4,8,4")
    assert code == 1 and "differs: world size 2, lengths 4,8,4: dq of token" in out, out


@needs_library
@pytest.mark.parametrize("target, mutant, m, lengths, says", [
    ("zigzag-varlen", "first_doc_chunk", 2, "4,8", "forward: rank 0 never computes (query 10, key 4) at ring step 0"),
    ("zigzag-varlen", "sees_previous_document", 2, "4,4",
     "forward: rank 0 at ring step 0 computes (query 4, key 0): it crosses documents (query in document 2, key in document 1)"),
    ("zigzag-varlen", "wrong_rank", 3, "6", "rank 0 sends to rank 2, not its ring neighbour 1"),
    ("ring-attention-varlen", "last_tail_off_by_one", 2, "2", "forward: rank 0 never computes (query 0, key 0) at ring step 0"),
    ("ring-attention-varlen", "halved_cu", 2, "4,4", "forward: rank 0 never computes (query 1, key 0) at ring step 0"),
])
def test_mutants_are_refuted_with_their_first_difference(target, mutant, m, lengths, says):
    code, out, _ = _cli(target, "--impl", f"{MUTANTS}:{mutant}", "--world-sizes", str(m), "--lengths", lengths,
                        "--dtype", "bfloat16")
    assert code == 1, out
    assert f"differs: world size {m}, lengths {lengths}: {says}" in out, out


@needs_library
@pytest.mark.parametrize("argv, code, verdict", [
    (["zigzag-varlen", "--world-sizes", "2", "--lengths", "4,8"], 0, "conforms"),
    (["zigzag-varlen", "--world-sizes", "2", "--lengths", "4,4", "--impl", f"{MUTANTS}:sees_previous_document"],
     1, "differs"),
    (["zigzag", "--world-sizes", "2", "-n", "8"], 0, "conforms"),
])
def test_json_follows_its_schema(argv, code, verdict):
    jsonschema = pytest.importorskip("jsonschema")
    if "--impl" not in argv:
        argv = [*argv, "--impl", "ring-flash-attn"]
    got, out, err = _cli(*argv, "--json")
    assert got == code, out + err
    doc = json.loads(out, parse_constant=lambda token: pytest.fail(f"non-strict JSON {token}"))
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    assert doc["verdict"] == verdict and doc["schema_version"] == 1
    if verdict == "differs":
        assert doc["difference"]["lengths"] == [4, 4] and doc["difference"]["tokens"] == [4, 0]
    elif "-n" in argv:
        assert doc["runs"] == [{**doc["runs"][0], "world_size": 2, "n": 8, "lengths": None}]
    else:
        assert [(r["world_size"], r["lengths"]) for r in doc["runs"]] == [(2, [4, 8])]


def test_the_library_is_never_run_outside_the_side_condition():
    from ringproof.proofs.cp.conform import conform_varlen

    with pytest.raises(BadInput, match="cannot be run"):
        conform_varlen(VARLEN["zigzag-varlen"], None, "x", [(2, [(4, 6)])])
