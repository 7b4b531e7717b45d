"""`prove layout` for packed sequences (issue 46) / `ringproof.check_varlen_layout`: varlen index
maps (lengths, world_size) -> positions against the per-document layouts, at every lengths vector
within the bounds, smallest first; outside the side condition the map must refuse."""

import io
import json

import numpy as np
import pytest

import ringproof
from ringproof.errors import BadInput
from ringproof.proofs.cli.main import main
from ringproof.proofs.cp.adapters import LAYOUT_ADAPTERS, te_thd, te_thd_padded
from ringproof.proofs.cp.layout import lengths_vectors, varlen_pairs
from ringproof.schedules.documents import VARLEN

SCHEMA = __import__("pathlib").Path(__file__).parent.parent / "docs" / "json-schemas" / "layout.json"


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["layout", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- maps written from the definitions

def _chunks(start, length, parts):
    """A document's tokens start..start+length-1 cut into `parts` equal chunks (lists)."""
    size = length // parts
    return [list(range(start + c * size, start + (c + 1) * size)) for c in range(parts)]


def zigzag_by_loops(lengths, m):
    """Rank r holds chunks r and 2m−1−r of every document, documents in order; refuses unless 2m | L_i."""
    if any(length % (2 * m) for length in lengths):
        raise ValueError("2m must divide every length")
    out, start = [[] for _ in range(m)], 0
    for length in lengths:
        chunks = _chunks(start, length, 2 * m)
        for r in range(m):
            out[r] += chunks[r] + chunks[2 * m - 1 - r]
        start += length
    return [t for rank in out for t in rank]


def ring_by_loops(lengths, m):
    """Rank r holds chunk r of every document; refuses unless m | L_i."""
    if any(length % m for length in lengths):
        raise ValueError("m must divide every length")
    out, start = [[] for _ in range(m)], 0
    for length in lengths:
        for r, chunk in enumerate(_chunks(start, length, m)):
            out[r] += chunk
        start += length
    return [t for rank in out for t in rank]


def padded_by_loops(lengths, m):
    """zigzag_by_loops over each length rounded up to a multiple of 2m."""
    return zigzag_by_loops([(length + 2 * m - 1) // (2 * m) * (2 * m) for length in lengths], m)


# --------------------------------------------------------------------------- mutants

def first_document_chunk(lengths, m):
    """The chunk size of every document taken from the first one's."""
    if any(length % (2 * m) for length in lengths):
        raise ValueError("2m must divide every length")
    h = lengths[0] // (2 * m)
    out, start = [[] for _ in range(m)], 0
    for length in lengths:
        for r in range(m):
            for j in range(length // m):
                out[r].append(start + (r * h + j if j < h else (2 * m - 1 - r) * h + j - h))
        start += length
    return [t for rank in out for t in rank]


def last_tail_off_by_one(lengths, m):
    """The last document's tail chunks start one token early."""
    good = zigzag_by_loops(lengths, m)
    start, h, per_rank = sum(lengths[:-1]), lengths[-1] // (2 * m), sum(lengths) // m
    for r in range(m):
        for j in range(h):    # the last document's tail: the last h slots of rank r
            good[r * per_rank + per_rank - h + j] -= 1
    return good


def local_offsets(lengths, m):
    """Each document laid out at offset 0: positions within the document, not the pack."""
    out = [[] for _ in range(m)]
    for length in lengths:
        doc = zigzag_by_loops([length], m)
        k = length // m
        for r in range(m):
            out[r] += doc[r * k:(r + 1) * k]
    return [t for rank in out for t in rank]


def answers_everywhere(lengths, m):
    """`cu_seqlens // 2m` without the side condition: a layout of the rounded-down lengths."""
    return zigzag_by_loops([length // (2 * m) * (2 * m) for length in lengths], m)


# --------------------------------------------------------------------------- the checks

def test_lengths_vectors_come_smallest_first_and_are_counted():
    vectors = list(lengths_vectors(3, 5))
    assert vectors[:6] == [(1,), (2,), (3,), (4,), (5,), (1, 1)]
    assert vectors[6:9] == [(1, 2), (2, 1), (1, 3)]
    assert len(vectors) == len(set(vectors)) == varlen_pairs(3, 5, 1) == 5 + 10 + 10
    assert all(sum(v) <= 5 and min(v) >= 1 for v in vectors)


def test_the_layouts_equal_maps_written_with_loops():
    for name, fn in (("zigzag-varlen", zigzag_by_loops), ("ring-attention-varlen", ring_by_loops),
                     ("zigzag-varlen-padded", padded_by_loops)):
        for lengths in lengths_vectors(3, 20):
            for m in range(1, 5):
                if VARLEN[name].valid(lengths, m):
                    assert VARLEN[name].positions(lengths, m).tolist() == fn(lengths, m), (name, lengths, m)


@pytest.mark.parametrize("name, fn", [("zigzag-varlen", zigzag_by_loops), ("ring-attention-varlen", ring_by_loops),
                                      ("zigzag-varlen-padded", padded_by_loops),
                                      ("zigzag-varlen", te_thd), ("zigzag-varlen-bwd", te_thd),
                                      ("zigzag-varlen-padded", te_thd_padded)])
def test_independent_maps_are_equal(name, fn):
    check = ringproof.check_varlen_layout(fn, name, max_docs=3, max_len=24, max_m=3)
    assert check.ok, check.difference
    assert check.vectors > 0 and (check.refused > 0) != VARLEN[name.removesuffix("-bwd")].padded


@pytest.mark.parametrize("fn, where, rank, slot, expected, got", [
    # (4,4) is equal: equal lengths hide it; at (4,8), m=2, rank 0 holds 0,3 | 4,5,10,11
    (first_document_chunk, ((4, 8), 2), 0, 3, 5, 7),
    (last_tail_off_by_one, ((2,), 1), 0, 1, 1, 0),
    (local_offsets, ((2, 2), 1), 0, 2, 2, 0),
])
def test_mutants_are_refuted_at_their_smallest_vector(fn, where, rank, slot, expected, got):
    check = ringproof.check_varlen_layout(fn, "zigzag-varlen", max_docs=3, max_len=24, max_m=4)
    d = check.difference
    assert not check.ok and ((d.lengths, d.m), d.rank, d.slot, d.expected, d.got) == (where, rank, slot, expected, got)
    # replayed: the map gives it, the reference has the other token there, and every smaller vector agrees
    lengths, m = where
    k = sum(lengths) // m
    assert fn(lengths, m)[rank * k + slot] == got and zigzag_by_loops(lengths, m)[rank * k + slot] == expected
    for smaller in lengths_vectors(len(lengths), sum(lengths)):
        if (len(smaller), sum(smaller), smaller) < (len(lengths), sum(lengths), lengths):
            for mm in range(1, 5):
                if VARLEN["zigzag-varlen"].valid(smaller, mm):
                    assert fn(smaller, mm) == zigzag_by_loops(smaller, mm), (smaller, mm)
    assert d.load_expected == VARLEN["zigzag-varlen"].load(lengths, m, zigzag_by_loops(lengths, m))
    assert d.load_got == VARLEN["zigzag-varlen"].load(lengths, m, fn(lengths, m))


def test_a_map_that_answers_outside_the_side_condition_is_refuted():
    check = ringproof.check_varlen_layout(answers_everywhere, "zigzag-varlen", max_docs=3, max_len=24, max_m=4)
    d = check.difference
    assert (d.lengths, d.m, d.answered, d.rank) == ((1,), 1, 0, None)
    assert "outside the side condition (2m | L_i for every document i) the map returned 0 positions" in str(d)
    # the same map is right wherever the side condition holds
    assert (check.vectors, check.refused) == (0, 0)


def test_loads_are_pairs_per_rank_under_the_document_mask():
    zz = VARLEN["zigzag-varlen"]
    # documents of 4 and 8 on 2 ranks: zigzag gives each rank 5 + 18 pairs; document-major 10 + 3, 15 + 18
    assert zz.load((4, 8), 2, zz.positions((4, 8), 2)) == (23, 23)
    assert zz.load((4, 8), 2, [0, 3, 1, 2, 4, 5, 10, 11, 6, 7, 8, 9]) == (13, 33)
    brute = [sum(1 for q in rank for kk in range(12) if VARLEN["zigzag-varlen"].computes((4, 8), 2, q, kk))
             for rank in ([0, 3, 1, 2, 4, 5], [10, 11, 6, 7, 8, 9])]
    assert brute == [13, 33]
    padded = VARLEN["zigzag-varlen-padded"]
    # a real token of 1 and one of 3 padded to 4 each: padded tokens attend and are attended by nothing
    assert padded.keys_seen((1, 3), 2).tolist() == [1, 0, 0, 0, 1, 2, 3, 0]
    assert sum(padded.load((1, 3), 2, padded.positions((1, 3), 2))) == 1 + 6


def test_a_map_that_raises_inside_the_side_condition_is_bad_input():
    with pytest.raises(BadInput, match=r"raised at lengths=2, world_size=1 \(lengths zigzag-varlen allows"):
        ringproof.check_varlen_layout(lambda lengths, m: 1 / 0, "zigzag-varlen", max_len=8, max_m=2)
    with pytest.raises(BadInput, match="not integer positions"):
        ringproof.check_varlen_layout(lambda lengths, m: [0.5] * sum(lengths) if lengths[0] % 2 == 0
                                      else 1 / 0, "zigzag-varlen", max_len=8, max_m=2)
    with pytest.raises(BadInput, match="no varlen layout"):
        ringproof.check_varlen_layout(zigzag_by_loops, "zigzag")
    with pytest.raises(BadInput, match="over the limit of 1,000,000"):
        ringproof.check_varlen_layout(zigzag_by_loops, "zigzag-varlen", max_docs=4, max_len=200)


def test_cli_exit_codes_and_lines(tmp_path):
    path = tmp_path / "maps.py"
    path.write_text("def good(lengths, m):\n"
                    "    if any(x % m for x in lengths):\n        raise ValueError(x)\n"
                    "    out, start = [[] for _ in range(m)], 0\n"
                    "    for x in lengths:\n"
                    "        for r in range(m):\n            out[r] += range(start + r * x // m, start + (r + 1) * x // m)\n"
                    "        start += x\n"
                    "    return [t for o in out for t in o]\n"
                    "def flat(lengths, m):\n    return list(range(sum(lengths)))\n")
    code, out, _ = _cli("ring-attention-varlen", "--against", f"{path}:good", "--max-len", "16")
    assert code == 0 and "at all" in out and "D ≤ 3, T ≤ 16, m ≤ 4, m | L_i for every document i" in out
    code, out, _ = _cli("ring-attention-varlen", "--against", f"{path}:flat", "--max-len", "16")
    # one document is contiguous either way; (1, 1) at m = 2 is outside m | L_i and the map answers
    assert code == 1 and "lengths 1, m=2: outside the side condition" in out
    for argv, message in [
        (("zigzag-varlen", "--against", "torch-head-tail"), "torch-head-tail maps (seq_len, world_size)"),
        (("zigzag", "--against", "te-thd"), "te-thd maps (lengths, world_size)"),
        (("zigzag-varlen", "--against", "te-thd", "--max-n", "8"), "--max-n is for a single-sequence target"),
        (("zigzag", "--against", "te-thd", "--max-docs", "2"), "--max-docs is for a varlen target"),
        (("zigzag-varlen", "--against", "te-thd", "--max-docs", "5", "--max-len", "100"),
         "--max-docs 5 --max-len 100 --max-m 4 hold 317,501,980 (lengths, m) pairs, over the limit of 1,000,000"),
        (("zigzag-varlen", "--against", "te-thd", "--max-len", "5000"), "between 1 and 4096"),
        (("zigzag-varlen", "--against", f"{path}:missing"), "has no missing"),
        (("zigzag-varlen-padded", "--against", "te-thd"), "the index map raised at lengths=1, world_size=1"),
    ]:
        code, _, err = _cli(*argv)
        assert code == 64 and len(err.strip().splitlines()) == 1 and message in err, (argv, err)


def test_cli_json_follows_its_schema():
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    code, out, _ = _cli("zigzag-varlen", "--against", "te-thd", "--max-len", "16", "--json")
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["equal"] and doc["varlen"] and doc["difference"] is None
    assert doc["bounds"] == {"max_docs": 3, "max_len": 16, "max_m": 4} and doc["refused"] > 0
    code, out, _ = _cli("zigzag-varlen", "--against", f"{__file__}:local_offsets",
                        "--max-len", "16", "--json")
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    assert code == 1 and not doc["equal"]
    assert {k: doc["difference"][k] for k in ("lengths", "m", "rank", "slot", "expected", "got",
                                              "document_expected", "document_got")} == \
        {"lengths": [2, 2], "m": 1, "rank": 0, "slot": 2, "expected": 2, "got": 0,
         "document_expected": 2, "document_got": 1}
    code, out, _ = _cli("striped", "--against", f"{__file__}:_striped_wrong", "--max-n", "8",
                        "--json")
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    assert code == 1 and (doc["difference"]["n"], doc["difference"]["m"]) == (4, 2) and not doc["varlen"]
    assert doc["bounds"] == {"max_n": 8, "max_m": 8}


def _striped_wrong(n, m):
    return list(range(n))


def test_every_adapter_row_names_a_kind_and_a_callable():
    assert {name for name, row in LAYOUT_ADAPTERS.items() if row.varlen} == \
        {"torch-per-document-head-tail", "te-thd", "te-thd-padded", "torch-ptrr-document"}
    assert all(callable(row.fn) and row.doc for row in LAYOUT_ADAPTERS.values())


def test_torch_per_document_balancer_is_document_major():
    """pytorch/pytorch#189902: torch 2.13.0's per-document balancer lays out every document's
    2m chunks before the next document's, so the first rank's slice of two documents of 4 on 2
    ranks is all of the first document."""
    pytest.importorskip("torch", reason="PyTorch is an optional extra: pip install -e .[torch]")
    from ringproof.proofs.cp.adapters import torch_per_document_head_tail

    assert torch_per_document_head_tail((4, 4), 2).tolist() == [0, 3, 1, 2, 4, 7, 5, 6]
    assert torch_per_document_head_tail((8,), 2).tolist() == VARLEN["zigzag-varlen"].positions((8,), 2).tolist()
    code, out, _ = _cli("zigzag-varlen", "--against", "torch-per-document-head-tail")
    assert code == 1, out
    assert ("lengths 4,4, m=2, rank 0, slot 2: the layout has token 4 (document 2), the map token 1 "
            "(document 1); pairs per rank "
            "(document mask): the layout 10, 10, the map 10, 10") in out
    # it refuses outside 2m | L_i, as it must, and equals the layout for one document
    check = ringproof.check_varlen_layout(torch_per_document_head_tail, "zigzag-varlen", max_docs=1, max_len=32)
    assert check.ok and check.refused > 0

    # and the order is all that differs: its blocks regrouped rank-major are the layout everywhere
    def regrouped(lengths, m):
        out, start, ranks = torch_per_document_head_tail(lengths, m).tolist(), 0, [[] for _ in range(m)]
        for length in lengths:
            for r in range(m):
                ranks[r] += out[start + r * length // m:start + (r + 1) * length // m]
            start += length
        return [t for rank in ranks for t in rank]

    assert ringproof.check_varlen_layout(regrouped, "zigzag-varlen", max_docs=3, max_len=32).ok


def test_the_counts_docs_context_parallel_md_gives():
    """The defaults hold 174,976 (lengths, m) pairs; zigzag-varlen allows 6,451 of them (66 with one
    document), the padded target all of them."""
    from ringproof.proofs.cli.layout import VARLEN_DEFAULTS

    bounds = VARLEN_DEFAULTS
    pairs = [(lengths, m) for lengths in lengths_vectors(bounds["max_docs"], bounds["max_len"])
             for m in range(1, bounds["max_m"] + 1)]
    assert len(pairs) == varlen_pairs(**bounds) == 174_976
    valid = [p for p in pairs if VARLEN["zigzag-varlen"].valid(*p)]
    assert (len(valid), len(pairs) - len(valid)) == (6_451, 168_525)
    assert sum(len(lengths) == 1 for lengths, _ in valid) == 66
    assert all(VARLEN["zigzag-varlen-padded"].valid(*p) for p in pairs)
    text = (__import__("pathlib").Path(__file__).parent.parent / "docs" / "context-parallel.md").read_text()
    assert all(figure in text for figure in ("6,451", "168,525", "174,976", "all 66 pairs"))


def test_more_documents_than_tokens_cost_nothing():
    assert varlen_pairs(10**9, 8, 1) == 2**8 - 1 == len(list(lengths_vectors(10**9, 8)))
