"""Named index maps of real load balancers, for `prove layout --against NAME`.

`LAYOUT_ADAPTERS` is the one table of them: each row a map, the module it needs, and whether it
maps a single sequence `(seq_len, world_size)` or a packed one `(lengths, world_size)`, and where
a balancer is defined at all (its `domain`: PTRR only where torch's flex context parallelism runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from ringproof.errors import BadInput
from ringproof.proofs.cp.load import load_callable


def torch_head_tail(seq_len: int, world_size: int):
    """PyTorch's context-parallel head-tail load balancer (`_HeadTailLoadBalancer` of
    torch.distributed.tensor.experimental._attention): its rearrange indices, on CPU, no process
    group needed."""
    from torch.distributed.tensor.experimental._attention import _HeadTailLoadBalancer

    return _HeadTailLoadBalancer(seq_len, world_size, "cpu")._generate_indices().reshape(-1).numpy()


def torch_per_document_head_tail(lengths, world_size: int):
    """PyTorch's per-document head-tail load balancer (`_PerDocumentHeadTailLoadBalancer` of
    torch.distributed.tensor.experimental._context_parallel._load_balancer) for one batch row of
    documents: its rearrange indices, on CPU, no process group. It asserts 2m | L_i itself."""
    from torch.distributed.tensor.experimental._context_parallel._load_balancer import (
        _PerDocumentHeadTailLoadBalancer)

    balancer = _PerDocumentHeadTailLoadBalancer([[int(x) for x in lengths]], world_size, "cpu")
    return balancer._generate_indices()[0].numpy()


def te_thd(lengths, world_size: int):
    """TransformerEngine's THD partition (its `thd_get_partitioned_indices`), from its definition:
    rank r's local token idx lies in sequence s of cu_s = cu_seqlens / m, at index i = idx − cu_s[s]
    of its ℓ = cu_s[s+1] − cu_s[s] local tokens, and is global token i + m·cu_s[s] + (ℓ/2)·o with
    o = r for the first half (i < ℓ/2) and 2(m − 1) − r for the second. TE asserts that every
    cu_seqlens entry is a multiple of 2m; so does this map (ValueError), rather than divide."""
    m = int(world_size)
    cu = [0]
    for length in lengths:
        cu.append(cu[-1] + int(length))
    if m < 1 or any(c % (2 * m) for c in cu):
        raise ValueError(f"cu_seqlens {cu} has an entry that is not a multiple of 2·{m}")
    cu_s = np.asarray(cu, dtype=np.int64) // m
    idx = np.arange(cu_s[-1], dtype=np.int64)
    seq = np.searchsorted(cu_s, idx, side="right") - 1
    local = idx - cu_s[seq]
    half = (cu_s[seq + 1] - cu_s[seq]) // 2
    ranks = []
    for r in range(m):
        offset = np.where(local < half, r, 2 * (m - 1) - r)
        ranks.append(local + m * cu_s[seq] + half * offset)
    return np.concatenate(ranks)


def te_thd_padded(lengths, world_size: int):
    """`te_thd` over cu_seqlens_padded: each length rounded up to a multiple of 2m first, as
    TransformerEngine's callers pad THD documents for context parallelism."""
    unit = 2 * int(world_size)
    return te_thd([-(-int(x) // unit) * unit for x in lengths], world_size)


# flex attention's default sparse block (`_DEFAULT_SPARSE_BLOCK_SIZE`), the only one torch's flex
# context parallelism builds its BlockMask with (`create_cp_block_mask`)
PTRR_BLOCK = 128


def _ptrr_domain(total: int, m: int) -> bool:
    """Where torch's flex context parallelism calls a BlockMask balancer: Q_LEN a multiple of
    m · 128 (`create_cp_block_mask` raises NotImplementedError elsewhere)."""
    return m >= 1 and total >= 1 and total % (m * PTRR_BLOCK) == 0


def _refuse_outside_ptrr(total: int, m: int) -> None:
    """Refuse, as `create_cp_block_mask` does, a length PTRR's flex path does not run: the bare
    balancer answers there with 128·⌈n/128⌉ positions, past the sequence's end."""
    if not _ptrr_domain(total, m):
        raise NotImplementedError(f"Q_LEN {total} is not divisible by CP mesh world size {m} * "
                                  f"BLOCK_SIZE {PTRR_BLOCK} (torch's create_cp_block_mask refuses it)")


def _block_mask(lengths: tuple[int, ...]):
    """flex attention's BlockMask (`create_block_mask`, B = H = 1, CPU, 128-token blocks) of the
    document-causal mask of documents `lengths` (one document: the causal mask)."""
    import torch
    from torch.nn.attention.flex_attention import create_block_mask

    total = sum(lengths)
    doc = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))

    def document_causal(b, h, q, k):
        return (doc[q] == doc[k]) & (k <= q)

    def causal(b, h, q, k):
        return k <= q

    return create_block_mask(causal if len(lengths) == 1 else document_causal, 1, 1, total, total,
                             device="cpu", BLOCK_SIZE=PTRR_BLOCK)


class LastMask:
    """The BlockMask of the last sequence asked for, kept by one map for one check: the balancer's
    input is the same at every world size and at the repeat call, which come one after another."""

    def __init__(self):
        self.last = None

    def __call__(self, lengths: tuple[int, ...]):
        if self.last is None or self.last[0] != lengths:
            self.last = (lengths, _block_mask(lengths))
        return self.last[1]


def _ptrr(lengths: tuple[int, ...], world_size: int, masks):
    from torch.distributed.tensor.experimental._context_parallel._load_balancer import _PTRRLoadBalancer

    mask = _block_mask(lengths) if masks is None else masks(lengths)
    return _PTRRLoadBalancer(mask, world_size)._generate_indices()[0].numpy()


def torch_ptrr(seq_len: int, world_size: int, masks=None):
    """PyTorch's processing-time round-robin balancer (`_PTRRLoadBalancer` of
    torch.distributed.tensor.experimental._context_parallel._load_balancer) on the causal mask's
    BlockMask: each 128-token query block's work is its count of non-empty key blocks, blocks
    sorted by work (descending, stable) are dealt to the ranks in snake order, each rank's sorted.
    Its rearrange indices, CPU, no process group; refused where flex CP refuses (m · 128 ∤ n).
    `masks`: where the BlockMask comes from (a `LastMask`; None: built at each call)."""
    _refuse_outside_ptrr(int(seq_len), int(world_size))
    return _ptrr((int(seq_len),), int(world_size), masks)


def torch_ptrr_document(lengths, world_size: int, masks=None):
    """`torch_ptrr` on the document-causal mask of packed documents `lengths` (documents may
    straddle blocks: a block's work counts the key blocks of every document it holds); refused
    where flex CP refuses (m · 128 ∤ T)."""
    lengths = tuple(int(x) for x in lengths)
    _refuse_outside_ptrr(sum(lengths), int(world_size))
    return _ptrr(lengths, int(world_size), masks)


@dataclass(frozen=True)
class Adapter:
    """One named index map: `fn`, the module it imports (`needs`), `varlen` whether it maps
    (lengths, world_size) rather than (seq_len, world_size), and what it is; `domain(total, m)`
    the sizes it is defined at (None: wherever it answers), `domain_text` the same for people;
    `per_check` whether each check gets a map of its own with a `LastMask` (`masks=`)."""

    fn: object
    needs: str | None
    varlen: bool
    doc: str
    domain: object = None
    domain_text: str = ""
    per_check: bool = False


_TORCH = "PyTorch: pip install -e '.[torch]'"
_LOAD_BALANCER = "torch.distributed.tensor.experimental._context_parallel._load_balancer"
LAYOUT_ADAPTERS = {
    "torch-head-tail": Adapter(torch_head_tail, "torch.distributed.tensor.experimental._attention", False,
                               "PyTorch's _HeadTailLoadBalancer (zigzag)"),
    "torch-per-document-head-tail": Adapter(
        torch_per_document_head_tail, _LOAD_BALANCER,
        True, "PyTorch's _PerDocumentHeadTailLoadBalancer (zigzag-varlen)"),
    "te-thd": Adapter(te_thd, None, True, "TransformerEngine's THD partition formula (zigzag-varlen)"),
    "te-thd-padded": Adapter(te_thd_padded, None, True,
                             "te-thd over cu_seqlens_padded (zigzag-varlen-padded)"),
    "torch-ptrr": Adapter(torch_ptrr, _LOAD_BALANCER, False,
                          "PyTorch's _PTRRLoadBalancer on the causal BlockMask (permutation)",
                          _ptrr_domain, f"m·{PTRR_BLOCK} | n", True),
    "torch-ptrr-document": Adapter(torch_ptrr_document, _LOAD_BALANCER, True,
                                   "PyTorch's _PTRRLoadBalancer on the document-causal BlockMask "
                                   "(permutation-varlen)", _ptrr_domain, f"m·{PTRR_BLOCK} | T", True),
}


def index_map(spec: str, varlen: bool = False):
    """The index map `--against` names: an adapter's name or MODULE:CALLABLE; `varlen`: the
    target's kind, which an adapter must share."""
    if spec in LAYOUT_ADAPTERS:
        row = LAYOUT_ADAPTERS[spec]
        if row.varlen != varlen:
            kinds = ("(seq_len, world_size)", "(lengths, world_size)")
            raise BadInput(f"{spec} maps {kinds[row.varlen]}, but the target needs a map "
                           f"{kinds[varlen]}: expected one of "
                           f"{', '.join(name for name, r in LAYOUT_ADAPTERS.items() if r.varlen == varlen)}")
        if row.needs is not None:
            try:
                __import__(row.needs)
            except Exception as err:
                raise BadInput(f"{spec} needs {row.needs} ({_TORCH}): "
                               f"{type(err).__name__}: {err}") from None
        return partial(row.fn, masks=LastMask()) if row.per_check else row.fn
    if ":" not in spec:
        raise BadInput(f"--against {spec[:80]!r}: expected one of {', '.join(LAYOUT_ADAPTERS)} or MODULE:CALLABLE")
    return load_callable(spec, "--against")
