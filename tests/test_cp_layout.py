"""`prove layout` / `ringproof.check_layout`: index maps of load balancers against the targets'
token layouts, at every valid size up to the bounds."""

import io

import numpy as np
import pytest

import ringproof
from ringproof.errors import BadInput
from ringproof.proofs.cli.main import main
from ringproof.schedules.context_parallel import SCHEDULES
from ringproof.schedules.dsl import params


def _zigzag_by_chunks(n, m):
    """The head-tail layout written independently of the target: chunk lists."""
    h = n // (2 * m)
    chunks = [list(range(c * h, (c + 1) * h)) for c in range(2 * m)]
    return [t for r in range(m) for t in chunks[r] + chunks[2 * m - 1 - r]]


def _striped(n, m):
    return [t for r in range(m) for t in range(r, n, m)]


def _swapped_pairing(n, m):
    """Wrong chunk pairing: rank r holds chunks r and 2m−2−r (the last rank keeps chunk m)."""
    h = n // (2 * m)
    chunks = [list(range(c * h, (c + 1) * h)) for c in range(2 * m)]
    other = [2 * m - 2 - r if r < m - 1 else 2 * m - 1 for r in range(m)]
    return [t for r in range(m) for t in chunks[r] + chunks[other[r]]]


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["layout", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name, fn", [("zigzag", _zigzag_by_chunks), ("striped", _striped),
                                      ("ring-attention", lambda n, m: list(range(n))),
                                      ("ring-attention-causal", lambda n, m: np.arange(n))])
def test_independent_maps_equal_the_layouts(name, fn):
    check = ringproof.check_layout(fn, name, max_n=64, max_m=8)
    assert check.ok and check.sizes > 0


def test_every_position_appears_once_in_every_layout():
    for cp in SCHEDULES.values():
        for n in range(1, 49):
            for m in range(1, n + 1):
                if cp.valid(n, m):
                    assert sorted(cp.positions(params(n, m)).tolist()) == list(range(n)), (cp.name, n, m)


def test_a_wrong_pairing_is_found_at_its_smallest_size():
    check = ringproof.check_layout(_swapped_pairing, "zigzag", max_n=64, max_m=8)
    # m = 1 and m = 2 (rank 0 pairs chunk 0 with 2m-2 = 2 instead of 3) : n = 4, m = 2 is the first
    assert not check.ok
    d = check.difference
    assert (d.n, d.m, d.rank, d.slot) == (4, 2, 0, 1)
    assert (d.expected, d.got) == (3, 2)
    assert _zigzag_by_chunks(4, 2)[d.rank * 2 + d.slot] == d.expected


def test_too_few_or_too_many_positions_are_differences():
    short = ringproof.check_layout(lambda n, m: list(range(n - 1)), "ring-attention", max_n=8, max_m=2)
    assert (short.difference.n, short.difference.got) == (1, None)
    long = ringproof.check_layout(lambda n, m: list(range(n + 1)), "ring-attention", max_n=8, max_m=2)
    assert (long.difference.n, long.difference.expected, long.difference.got) == (1, None, 1)


def test_a_map_that_raises_or_returns_floats_is_bad_input():
    with pytest.raises(BadInput, match="raised at seq_len=2"):
        ringproof.check_layout(lambda n, m: 1 / 0, "zigzag", max_n=8, max_m=2)
    with pytest.raises(BadInput, match="not integer positions"):
        ringproof.check_layout(lambda n, m: [0.5] * n, "zigzag", max_n=8, max_m=2)
    with pytest.raises(BadInput, match="no token layout"):
        ringproof.check_layout(_striped, "algo1")


def test_cli_exit_codes(tmp_path):
    path = tmp_path / "maps.py"
    path.write_text("def good(n, m):\n    return [t for r in range(m) for t in range(r, n, m)]\n"
                    "def bad(n, m):\n    return list(range(n))\n")
    assert _cli("striped", "--against", f"{path}:good")[0] == 0
    code, out, _ = _cli("striped", "--against", f"{path}:bad", "--max-n", "16")
    assert code == 1 and "n=4, m=2, rank 0, slot 1: the layout has token 2, the map token 1" in out
    for against in (f"{path}:missing", "no_such_module_xyz:f", "nocolon"):
        code, _, err = _cli("striped", "--against", against)
        assert code == 64 and len(err.strip().splitlines()) == 1, err


def test_torch_head_tail_is_the_zigzag_layout():
    pytest.importorskip("torch", reason="PyTorch is an optional extra: pip install -e .[torch]")
    from ringproof.proofs.cp.adapters import torch_head_tail

    assert torch_head_tail(16, 4).tolist() == [0, 1, 14, 15, 2, 3, 12, 13, 4, 5, 10, 11, 6, 7, 8, 9]
    code, out, _ = _cli("zigzag", "--against", "torch-head-tail", "--max-n", "512", "--max-m", "8")
    assert code == 0 and "equals" in out
    # torch refuses n = 1 (it requires 2m | n), a size striped allows: the maps cannot be compared
    code, _, err = _cli("striped", "--against", "torch-head-tail", "--max-n", "64", "--max-m", "4")
    assert code == 64 and "seq_len=1, world_size=1 (a size striped allows: m | n)" in err
