"""`prove layout permutation[-varlen] --against torch-ptrr[-document]`: PyTorch's processing-time
round-robin balancer (`_PTRRLoadBalancer`) is a permutation at every size flex context parallelism
runs, the layouts it equals and its balance beside head-tail's, each figure against a count
written here; mutants of it are refuted where they are not permutations."""

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from ringproof.errors import BadInput
from ringproof.proofs.cli.main import main
from ringproof.proofs.cp.adapters import PTRR_BLOCK, _ptrr_domain
from ringproof.proofs.cp.layout import (check_permutation, check_permutation_varlen, max_over_mean,
                                        tiles_per_rank)

ROOT = Path(__file__).parent.parent
SCHEMA = ROOT / "docs" / "json-schemas" / "layout.json"
B = 128


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["layout", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _torch():
    pytest.importorskip("torch", reason="PyTorch is an optional extra: pip install -e .[cp]")


# --------------------------------------------------------------------------- PTRR from its definition

def block_work(lengths, blocks):
    """Per 128-token query block, the key blocks holding a key one of its queries attends
    (document-causal; one document: causal), counted block pair by block pair."""
    doc = np.repeat(np.arange(len(lengths)), lengths)
    work = []
    for a in range(blocks):
        q = np.arange(a * B, (a + 1) * B)
        work.append(sum(bool(((doc[q][:, None] == doc[k][None, :]) & (k[None, :] <= q[:, None])).any())
                        for k in (np.arange(b * B, (b + 1) * B) for b in range(blocks))))
    return work


def ptrr_blocks(work, m):
    """The docstring's schedule: blocks by work, descending, ties in block order; row i of m
    blocks dealt to ranks 0..m−1 (even i) or m−1..0 (odd i); each rank's blocks ascending."""
    order = sorted(range(len(work)), key=lambda b: -work[b])
    ranks = [[] for _ in range(m)]
    for i, b in enumerate(order):
        row, col = divmod(i, m)
        ranks[col if row % 2 == 0 else m - 1 - col].append(b)
    return [sorted(r) for r in ranks]


def expand(ranks):
    return [t for blocks in ranks for b in blocks for t in range(b * B, (b + 1) * B)]


def ptrr_model(lengths, m):
    total = sum(lengths)
    if total % (m * B):
        raise ValueError(f"m·{B} ∤ {total}")
    return expand(ptrr_blocks(block_work(lengths, total // B), m))


def model(n, m):
    return ptrr_model((n,), m)


# --------------------------------------------------------------------------- mutants

def duplicated_block(n, m):
    """Rank 1's first block replaced by a copy of rank 0's: some block on no rank."""
    ranks = ptrr_blocks(block_work((n,), n // B), m) if n % (m * B) == 0 else None
    if ranks is None:
        raise ValueError("outside the domain")
    if m > 1:
        ranks[1][0] = ranks[0][0]
    return expand(ranks)


def past_the_end(n, m):
    """Every position one further: the last token is n, the first on no rank."""
    return [t + 1 for t in model(n, m)]


def short(n, m):
    return model(n, m)[:-1]


_CALLS = [0]


def alternating(n, m):
    """Model order on odd calls, ranks reversed on even ones."""
    _CALLS[0] += 1
    out = model(n, m)
    if _CALLS[0] % 2 == 0:
        k = n // m
        out = [t for r in reversed(range(m)) for t in out[r * k:(r + 1) * k]]
    return out


def moved_block(n, m):
    """Rank 0's first block exchanged with rank m−1's last: still a permutation, another balance."""
    if n % (m * B):
        raise ValueError("outside the domain")
    ranks = ptrr_blocks(block_work((n,), n // B), m)
    if m > 1:
        ranks[0][0], ranks[-1][-1] = ranks[-1][-1], ranks[0][0]
    return expand(ranks)


def never(n, m):
    raise RuntimeError("no")


def test_mutants_are_refuted_at_their_first_size_with_where():
    check = check_permutation(duplicated_block, max_n=1024, max_m=4, domain=_ptrr_domain)
    f = check.fault
    assert not check.ok and (f.kind, f.n, f.m, f.rank, f.slot, f.got, f.first_rank, f.first_slot) == \
        ("duplicate", 256, 2, 1, 0, 128, 0, 0)
    # nb = m = 2 puts block 1 on rank 0 (descending work): its copy on rank 1 is token 128 again
    assert model(256, 2)[:B] == list(range(128, 256))
    f = check_permutation(past_the_end, max_n=512, domain=_ptrr_domain).fault
    assert (f.kind, f.n, f.m, f.rank, f.slot, f.got) == ("range", 128, 1, 0, 127, 128)
    f = check_permutation(short, max_n=512, domain=_ptrr_domain).fault
    assert (f.kind, f.n, f.got) == ("length", 128, 127)
    _CALLS[0] = 0
    f = check_permutation(alternating, max_n=512, max_m=2, domain=_ptrr_domain).fault
    assert (f.kind, f.n, f.m, f.rank, f.slot, f.expected, f.got) == ("nondeterministic", 256, 2, 0, 0, 128, 0)
    with pytest.raises(BadInput, match="answered at no size"):
        check_permutation(never, max_n=64)


def test_a_moved_block_is_a_permutation_whose_balance_the_figures_show():
    real = check_permutation(model, max_n=1024, max_m=4, domain=_ptrr_domain)
    moved = check_permutation(moved_block, max_n=1024, max_m=4, domain=_ptrr_domain)
    assert real.ok and moved.ok and real.sizes == moved.sizes == 16
    differ = [(a.n, a.m) for a, b in zip(real.rows, moved.rows) if a.work != b.work]
    assert differ == [(n, m) for n, m in ((256, 2), (384, 3), (512, 2), (512, 4), (768, 2), (768, 3),
                                          (1024, 2), (1024, 4))]
    # at 512, m = 2 the real map is zigzag (balanced); the moved one is neither
    row = {(r.n, r.m): r for r in moved.rows}[(512, 2)]
    assert row.layouts == () and max_over_mean(row.work) > 1


def test_cli_exit_codes_and_one_line_refusals():
    code, out, _ = _cli("permutation", "--against", f"{__file__}:duplicated_block", "--max-n", "512")
    assert code == 1
    assert "n=256, m=2, rank 1, slot 0: token 128 again (first at rank 0, slot 0)" in out
    code, out, _ = _cli("permutation", "--against", f"{__file__}:moved_block", "--max-n", "512", "--max-m", "2")
    assert code == 0 and "contiguous at 5, striped at 4, zigzag at 4; none of ringproof's layouts at 1" in out
    assert "it raised at 762 (refused)" in out
    for argv in (("permutation", "--against", f"{__file__}:never"),
                 ("permutation", "--against", "te-thd"),
                 ("permutation", "--against", "striped", "--max-docs", "2"),
                 ("permutation-varlen", "--against", f"{__file__}:model", "--max-n", "8"),
                 ("zigzag", "--against", f"{__file__}:model", "--table"),
                 ("zigzag", "--against", f"{__file__}:model", "--len-step", "2")):
        code, _, err = _cli(*argv)
        assert code == 64 and len(err.strip().splitlines()) == 1, (argv, err)


def test_a_map_without_a_domain_is_checked_where_it_answers():
    """striped on every (n, m) with m | n: it is the striped layout everywhere, its balance the
    closed form's (k·(m − 1) spread); a map refusing some sizes is checked at the others."""
    check = check_permutation(lambda n, m: [t for r in range(m) for t in range(r, n, m)], max_n=48, max_m=4)
    assert check.ok and check.refused == 0 and check.outside == 0
    assert all("striped" in r.layouts for r in check.rows)
    assert all(max(r.work) - min(r.work) == (r.n // r.m) * (r.m - 1) for r in check.rows)
    half = check_permutation(lambda n, m: list(range(n)) if n % 2 == 0 else 1 / 0, max_n=16, max_m=2)
    assert half.ok and half.refused == 8 and half.sizes == len(half.rows) == 16
    assert all(r.tiles is None for r in half.rows)     # no size holds 128·m tokens


# --------------------------------------------------------------------------- the real balancer

def test_torch_ptrr_is_ptrr_by_its_definition_and_refuses_where_flex_cp_does():
    _torch()
    from torch.distributed.tensor.experimental._context_parallel._load_balancer import _PTRRLoadBalancer
    from torch.nn.attention.flex_attention import _DEFAULT_SPARSE_BLOCK_SIZE, create_block_mask

    from ringproof.proofs.cp.adapters import torch_ptrr, torch_ptrr_document

    assert PTRR_BLOCK == _DEFAULT_SPARSE_BLOCK_SIZE == B
    for n, m in [(n, m) for n in range(B, 1024 + 1, B) for m in range(1, 5)] + [(1024, 8), (768, 6)]:
        if n % (m * B) == 0:
            assert torch_ptrr(n, m).tolist() == model(n, m), (n, m)
    for lengths in ((128,), (100, 156), (32, 64, 160), (200, 56, 128, 128), (1, 383), (130, 250, 4)):
        for m in (1, 2, 3, 4):
            if sum(lengths) % (m * B) == 0:
                assert torch_ptrr_document(lengths, m).tolist() == ptrr_model(lengths, m), (lengths, m)
    # the docstring's own example (16 blocks, three documents of 4, 8 and 4 blocks, two ranks)
    assert [t // B for t in torch_ptrr_document((4 * B, 8 * B, 4 * B), 2)[::B]] == \
        [2, 3, 5, 6, 8, 11, 12, 13, 0, 1, 4, 7, 9, 10, 14, 15]
    with pytest.raises(NotImplementedError, match="Q_LEN 384 is not divisible by CP mesh world size 2"):
        torch_ptrr(384, 2)
    # why: the bare balancer answers at n = 200 with 256 positions, 56 of them past the end
    bare = _PTRRLoadBalancer(create_block_mask(lambda b, h, q, k: k <= q, 1, 1, 200, 200, device="cpu"), 1)
    out = bare._generate_indices()[0]
    assert len(out) == 256 and int(out.max()) == 255


def _pairs_and_tiles(lengths, positions, m):
    """Per rank, (q, k) pairs its queries attend and non-empty 128×128 tiles of the rearranged
    sequence, each by its own loop over the dense mask."""
    doc = np.repeat(np.arange(len(lengths)), lengths)
    pos = np.asarray(positions)
    n, k = len(pos), len(pos) // m
    mask = (doc[pos][:, None] == doc[pos][None, :]) & (pos[None, :] <= pos[:, None])
    pairs = [int(mask[r * k:(r + 1) * k].sum()) for r in range(m)]
    tiles = [0] * m
    for a in range(n // B):
        for b in range(n // B):
            if mask[a * B:(a + 1) * B, b * B:(b + 1) * B].any():
                tiles[a * B // k] += 1
    return tuple(pairs), tuple(tiles)


def test_balance_figures_agree_with_a_count_from_the_real_balancers():
    _torch()
    from ringproof.proofs.cp.adapters import LAYOUT_ADAPTERS, torch_head_tail, torch_ptrr

    row = LAYOUT_ADAPTERS["torch-ptrr"]
    check = check_permutation(torch_ptrr, max_n=1024, max_m=4, domain=row.domain, domain_text=row.domain_text)
    assert check.ok and check.sizes == 16
    for r in check.rows:
        assert (r.work, r.tiles) == _pairs_and_tiles((r.n,), torch_ptrr(r.n, r.m), r.m), (r.n, r.m)
        assert (r.head_tail, r.head_tail_tiles) == _pairs_and_tiles((r.n,), torch_head_tail(r.n, r.m), r.m)
    rows = {(r.n, r.m): r for r in check.rows}
    # nb = m: rank r holds block m − 1 − r; block b's queries attend 128²·b + 128·129/2 pairs
    work = [B * B * (3 - r) + B * (B + 1) // 2 for r in range(4)]
    assert rows[(512, 4)].work == tuple(work) and max_over_mean(work) == pytest.approx(1.74854, abs=1e-5)
    # nb = 2m: the zigzag layout, exactly balanced
    assert rows[(512, 2)].layouts == ("zigzag",) and len(set(rows[(512, 2)].work)) == 1


@pytest.mark.slow
def test_the_causal_spread_rule_docs_context_parallel_md_states():
    """nb = n/128 blocks: spread 0 where nb/m is even (zigzag at nb = 2m), 128²·(m − 1) pairs and
    m − 1 tiles where it is odd; over n ≤ 2048, m ≤ 8 the busiest rank never attends fewer pairs
    than head-tail's (more at 14 of 42 sizes), and has fewer tiles at 7."""
    _torch()
    from ringproof.proofs.cp.adapters import torch_ptrr

    check = check_permutation(torch_ptrr, max_n=2048, max_m=8, domain=_ptrr_domain)
    assert check.ok and check.sizes == 42
    for r in check.rows:
        odd = (r.n // B // r.m) % 2 == 1
        assert max(r.work) - min(r.work) == (B * B * (r.m - 1) if odd else 0), (r.n, r.m)
        assert max(r.tiles) - min(r.tiles) == (r.m - 1 if odd else 0), (r.n, r.m)
        assert ("zigzag" in r.layouts) == (r.n // B == 2 * r.m if r.m > 1 else True), (r.n, r.m)
    more = sum(max(r.work) > max(r.head_tail) for r in check.rows)
    assert more == 14 and all(max(r.work) >= max(r.head_tail) for r in check.rows)
    assert sum(max(r.tiles) < max(r.head_tail_tiles) for r in check.rows) == 7
    assert round(max_over_mean({(r.n, r.m): r for r in check.rows}[(1024, 8)].work), 2) == 1.87
    code, _, err = _cli("zigzag", "--against", "torch-ptrr")
    assert code == 64 and "seq_len=2, world_size=1" in err and "NotImplementedError" in err


def test_document_balance_agrees_with_a_count_from_the_real_balancers():
    _torch()
    from ringproof.proofs.cp.adapters import torch_head_tail, torch_ptrr_document

    def per_document(lengths, m):
        out, start = [[] for _ in range(m)], 0
        for length in lengths:
            h = length // (2 * m)
            for r in range(m):
                out[r] += list(range(start + r * h, start + (r + 1) * h))
                out[r] += list(range(start + (2 * m - 1 - r) * h, start + (2 * m - r) * h))
            start += length
        return [t for rank in out for t in rank]

    check = check_permutation_varlen(torch_ptrr_document, max_docs=2, max_len=384, max_m=3, step=64,
                                     domain=_ptrr_domain)
    # T = 128, 256, 384 hold 2, 4, 6 vectors (D ≤ 2, lengths multiples of 64), at m = 1; 1, 2; 1, 3
    assert check.ok and check.sizes == 2 + 4 * 2 + 6 * 2 == 22
    for r in check.rows:
        assert (r.work, r.tiles) == _pairs_and_tiles(r.lengths, torch_ptrr_document(r.lengths, r.m), r.m)
        assert (r.head_tail, r.head_tail_tiles) == \
            _pairs_and_tiles(r.lengths, torch_head_tail(r.total, r.m), r.m)
        valid = all(length % (2 * r.m) == 0 for length in r.lengths)
        assert (r.per_document, r.per_document_tiles) == \
            (_pairs_and_tiles(r.lengths, per_document(r.lengths, r.m), r.m) if valid else (None, None))


def test_tiles_per_rank_counts_the_rearranged_keys():
    """Head-tail on 256 tokens, 2 ranks: 64-token chunks share blocks, every tile non-empty."""
    head_tail = [*range(64), *range(192, 256), *range(64, 192)]
    assert tiles_per_rank(np.zeros(256, dtype=np.int64), head_tail, 2) == (2, 2)
    assert tiles_per_rank(np.zeros(256, dtype=np.int64), range(256), 2) == (1, 2)
    assert tiles_per_rank(np.zeros(200, dtype=np.int64), range(200), 1) is None


def test_cli_json_follows_its_schema():
    _torch()
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    code, out, _ = _cli("permutation", "--against", "torch-ptrr", "--max-n", "512", "--max-m", "4", "--json")
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["equal"] and doc["sizes"] == 8 and doc["difference"] is None
    # n = 256, 384, 512 at m = n/128: rank r holds block m − 1 − r, no registered layout
    assert doc["requires"] == "m·128 | n" and doc["layouts"]["none"] == 3
    row = next(r for r in doc["rows"] if (r["n"], r["m"]) == (512, 4))
    assert row["layouts"] == [] and row["work"] == [B * B * (3 - r) + B * (B + 1) // 2 for r in range(4)]
    assert row["head_tail_max_over_mean"] == 1.0
    code, out, _ = _cli("permutation", "--against", f"{__file__}:duplicated_block", "--max-n", "512", "--json")
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    assert code == 1 and not doc["equal"] and doc["difference"]["fault"] == "duplicate"
    code, out, _ = _cli("permutation-varlen", "--against", "torch-ptrr-document", "--max-len", "256",
                        "--len-step", "64", "--json")
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    assert code == 0 and doc["varlen"] and doc["bounds"] == {"max_docs": 2, "max_len": 256, "max_m": 4, "step": 64}
    assert all("lengths" in r and "per_document" in r for r in doc["rows"])


# --------------------------------------------------------------------------- the docs' figures

def _transcripts():
    """The `$ prove layout permutation…` blocks of docs/context-parallel.md: (command, lines)."""
    text = (ROOT / "docs" / "context-parallel.md").read_text()
    for body in re.findall(r"^```\n(\$ prove layout permutation.*?)^```", text, re.S | re.M):
        cmd, _, printed = body.partition("\n")
        yield cmd[2:], printed


def test_the_docs_show_what_the_commands_print():
    _torch()
    found = list(_transcripts())
    assert len(found) == 2
    for cmd, printed in found:
        if "permutation-varlen" in cmd and "--max-docs 3" in cmd:
            continue     # the slow one: test_the_docs_varlen_figures
        code, out, _ = _cli(*cmd.split()[2:])
        assert code == 0 and out == printed, cmd


@pytest.mark.slow
def test_the_docs_varlen_figures():
    _torch()
    for cmd, printed in _transcripts():
        if "permutation-varlen" in cmd:
            code, out, _ = _cli(*cmd.split()[2:])
            assert code == 0 and out == printed, cmd
