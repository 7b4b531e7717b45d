"""`prove conform llama3-varlen --impl ring-flash-attn`: ring-flash-attn's all-gather context
parallelism (`llama3_flash_attn_varlen_func`, its cu_seqlens from `llama3_flash_attn_prepare_cu_seqlens`)
run on a gloo process group with the recording varlen stand-ins, held against the all-gather machine
(pairs per head, collectives, placement through the numerics); lengths where m ∤ T refused before any
run; mutants of the library refuted with what differs. Needs the [cp] extra."""

import importlib.util
import io
import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the [cp] extra is not installed: pip install -e .[cp]")

from ringproof.proofs.cli.main import main  # noqa: E402
from ringproof.proofs.cp import allgather_conform  # noqa: E402
from ringproof.proofs.cp.conform import load_implementation  # noqa: E402
from ringproof.schedules.allgather import ALLGATHER  # noqa: E402

SCHEMA = Path(__file__).parent.parent / "docs" / "json-schemas" / "conform.json"
needs_library = pytest.mark.skipif(importlib.util.find_spec("ring_flash_attn") is None,
                                   reason="ring-flash-attn is not installed: pip install -e .[cp]")
VARLEN = ALLGATHER["llama3-varlen"]


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["conform", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _library():
    """ring-flash-attn's llama3 module, as `prove conform` loads it (the forked ranks inherit a patch)."""
    return sys.modules[load_implementation("ring-flash-attn", VARLEN).__module__]


@pytest.mark.parametrize("argv, says", [
    (["llama3-varlen", "--lengths", "3,4", "--world-sizes", "2,4"],
     "--lengths 3,4: llama3-varlen needs m | T = Σ L_i (llama3_flash_attn_prepare_cu_seqlens asserts it), and "
     "T = 7 is not a multiple of 2 at world size 2 (nor at any world size asked for)"),
    (["llama3-varlen", "-n", "8"], "-n is for single-sequence targets"),
    (["llama3", "--lengths", "4"], "--lengths and --vectors are for llama3-varlen"),
    (["llama3", "-n", "5", "--world-sizes", "2"], "no size to run: llama3 needs m | T"),
    (["llama3-varlen", "--lengths", "4", "--heads", "3", "--heads-k-stride", "2"],
     "--heads-k-stride 2 does not divide --heads 3"),
    (["zigzag-varlen", "--lengths", "4", "--heads-k-stride", "1"], "--heads-k-stride is for the llama3 targets"),
    (["llama3-varlen", "--lengths", "256,258"], "514 tokens, at most 512"),
    (["llama3-varlen", "--vectors", "0"], "no lengths vector to run"),
    (["llama3-varlen", "--lengths", "4", "-d", "1", "--heads", "64", "--dtype", "bfloat16"],
     "rows of every 1 head are all distinct: give a larger -d"),
])
def test_bad_input_is_one_line_before_any_run(argv, says):
    code, out, err = _cli(*argv, "--impl", "ring-flash-attn")
    assert code == 64 and len(err.strip().splitlines()) == 1, err
    assert says in err and "world size" not in out, err


def test_random_vectors_meet_m_divides_t_and_cross_ranks():
    plan, skipped = allgather_conform.plan(VARLEN, [2, 3], [(4, 8, 4)], vectors=4, seed=3)
    assert skipped == [((4, 8, 4), 3)] and plan[0][1][0] == (4, 8, 4)
    assert all(sum(v) % m == 0 for m, vectors in plan for v in vectors)
    assert any(v[0] % m for m, vectors in plan for v in vectors)         # a document crossing ranks
    assert allgather_conform.plan(VARLEN, [2, 3], [(4, 8, 4)], vectors=4, seed=3)[0] == plan


@needs_library
def test_the_library_conforms_with_documents_crossing_ranks():
    code, out, err = _cli("llama3-varlen", "--impl", "ring-flash-attn", "--world-sizes", "2,3",
                          "--lengths", "3,5,4", "--lengths", "6,3")
    assert code == 0, out + err
    # lengths 3,5,4 at m = 2: rank 0 runs documents 1, 2 and rank 1 documents 2, 3: 4 segments × 2 heads × 2 passes
    assert "world size 2, lengths 3,5,4: 16 kernel calls; forward and backward pairs equal the all-gather" in out
    assert ("4 all-gathers forward and 4 backward (K and V of 2 head groups, 6 rows from each of 2 ranks), "
            "4 reduce-scatters of dK, dV after the backward's calls; nothing point to point") in out
    assert "world size 3, lengths 6,3" in out and "not run: lengths 6,3 at world size 2 (outside m | T" in out
    assert "conforms at every world size and lengths vector run: 3 lengths vectors at world sizes 2, 3" in out


@needs_library
def test_json_follows_its_schema_with_all_heads_in_one_group():
    jsonschema = pytest.importorskip("jsonschema")
    code, out, err = _cli("llama3-varlen", "--impl", "ring-flash-attn", "--world-sizes", "2", "--lengths", "3,5",
                          "--heads-k-stride", "2", "--json")
    assert code == 0, out + err
    doc = json.loads(out, parse_constant=lambda token: pytest.fail(f"non-strict JSON {token}"))
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    assert doc["verdict"] == "conforms" and doc["heads_k_stride"] == 2
    assert [(r["world_size"], r["lengths"], r["kernel_calls"]) for r in doc["runs"]] == [(2, [3, 5], 6)]
    assert "K and V of 1 head group, 4 rows from each of 2 ranks" in doc["runs"][0]["communication"]


def _q_not_clipped(real):
    def prepare(cu_seqlens, causal, rank, world_size):
        cu_q, cu_k, max_q, max_k, local_k_slice = real(cu_seqlens, causal, rank, world_size)
        S = int(cu_seqlens[-1]) // world_size
        cu_q = cu_q.clone()
        cu_q[-1] = int(cu_seqlens[torch.searchsorted(cu_seqlens, (rank + 1) * S)]) - rank * S   # the document's end
        return cu_q, cu_k, int((cu_q[1:] - cu_q[:-1]).max()), max_k, local_k_slice
    return prepare


def _k_from_rank_start(real):
    def prepare(cu_seqlens, causal, rank, world_size):
        cu_q, cu_k, max_q, max_k, local_k_slice = real(cu_seqlens, causal, rank, world_size)
        lo = rank * (int(cu_seqlens[-1]) // world_size)
        cu_k = (cu_k + local_k_slice.start - lo).clamp(min=0)
        return cu_q, cu_k, max_q, int((cu_k[1:] - cu_k[:-1]).max()), slice(lo, local_k_slice.stop)
    return prepare


def _k_not_clipped(real):
    def prepare(cu_seqlens, causal, rank, world_size):   # the non-causal cut: keys to the document's end
        return real(cu_seqlens, False, rank, world_size)
    return prepare


def _v_not_waited(comm):
    class Lazy(comm):
        def wait(self):                     # waits on K's all-gather only, computes on V's before it lands
            if self.handles:
                self.handles[0].wait()
            self.handles = []
    return Lazy


def _kept_local(real):
    def reduce_scatter_tensor(output, input, op=None, group=None, async_op=False):   # no sum over the ranks
        rows = output.shape[0]
        rank = torch.distributed.get_rank(group)
        output.copy_(input[rank * rows:(rank + 1) * rows])
    return reduce_scatter_tensor


@needs_library
@pytest.mark.parametrize("name, attribute, mutate, says", [
    ("cu_seqlens_q not clipped at the rank's end", "llama3_flash_attn_prepare_cu_seqlens", _q_not_clipped,
     "rank 0 in the forward pass raised ValueError: cu_seqlens_q [0, 6] does not cut the 4 rows of q"),
    ("a segment's keys from the rank's first token", "llama3_flash_attn_prepare_cu_seqlens", _k_from_rank_start,
     "forward: rank 1 never computes (query 4, key 0) in head 0, as the all-gather machine does"),
    ("cu_seqlens_k not clipped at the rank's end", "llama3_flash_attn_prepare_cu_seqlens", _k_not_clipped,
     "forward: rank 0 computes (query 0, key 1) in head 0: the mask excludes it (key after query)"),
    ("V used before its all-gather completes", "Comm", _v_not_waited,
     "rank 0 runs head 0 in the forward pass before its all-gather of V completes"),
    ("dK, dV kept on the rank that computed them", "reduce_scatter_tensor", _kept_local,
     "dk of token 2 on rank 0 differs from autograd by 0.44"),
])
def test_mutants_of_the_library_are_refuted_with_what_differs(monkeypatch, name, attribute, mutate, says):
    module = torch.distributed if attribute == "reduce_scatter_tensor" else _library()
    monkeypatch.setattr(module, attribute, mutate(getattr(module, attribute)))
    code, out, _ = _cli("llama3-varlen", "--impl", "ring-flash-attn", "--world-sizes", "2", "--lengths", "6,2")
    assert code == 1, (name, out)
    assert f"differs: world size 2, lengths 6,2: {says}" in out, (name, out)


def _report(**change):
    """Rank 0's report of lengths 4 at m = 2 (one head) as the machine has it, with `change` made."""
    from ringproof.proofs.cp.kernels import Call, Collective

    calls = [Call(kind, 0, 0, True, (0, 1), (0, 1), (0, 1), (0, 1)) for kind in ("forward", "backward")]
    gathers = [Collective("all-gather", phase, array, (0, 1), 2, 4, 2, at, at, (0, 1, 2, 3))
               for phase, at in (("forward", 0), ("backward", 1)) for array in ("k", "v")]
    scatters = [Collective("reduce-scatter", "backward", array, (0, 1), 4, 2, 2, 2, 2) for array in ("dk", "dv")]
    report = {"rank": 0, "peers": [], "calls": calls, "collectives": gathers + scatters}
    for key, edit in change.items():
        report[key] = edit(report[key])
    return report


@pytest.mark.parametrize("change, says", [
    ({}, None),
    ({"peers": lambda p: [("send", 1)]}, "rank 0 sends to rank 1 point to point"),
    ({"collectives": lambda c: [*c, type(c[0])("all-reduce", "backward")]},
     "rank 0 in the backward pass makes an all-reduce: the all-gather machine's collectives are"),
    ({"collectives": lambda c: [type(c[0])(**{**vars(c[0]), "gathered": (2, 3, 0, 1)}), *c[1:]]},
     "rank 0 in the forward pass: row 0 of its gathered K of head 0 is token 2, not 0 (rank 0's chunk [0, 2))"),
    ({"collectives": lambda c: c[:-1]}, "rank 0 reduce-scatters dv of head 0 0 times, not once"),
    ({"collectives": lambda c: [*c[:4], type(c[4])(**{**vars(c[4]), "issued": 1}), c[5]]},
     "rank 0 reduce-scatters dk of head 0 before its last backward kernel call of those heads"),
    ({"collectives": lambda c: [type(c[0])(**{**vars(c[0]), "group": 1}), *c[1:]]},
     "makes an all-gather over 1 rank, not all 2"),
])
def test_the_collectives_check_names_each_departure_from_the_machine(change, says):
    from ringproof.proofs.cp.allgather_conform import _Gathered

    got = _Gathered(VARLEN, (4,), 2, 1)._collectives(_report(**change))
    assert got == says if says is None else says in got, got
