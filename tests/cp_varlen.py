"""Mutants of ring-flash-attn's varlen functions, for `prove conform ... --impl tests/cp_varlen.py:NAME`.

Each wraps the library's own function (loaded as `prove conform` loads it, over the recording
stand-ins) and breaks one thing a varlen caller or library gets wrong:

- `first_doc_chunk` (zigzag): the documents cut every L_1/m rows, a chunk size taken from the first
  document, instead of at the given cu_seqlens;
- `sees_previous_document` (zigzag): the boundary between documents 1 and 2 dropped, so the
  queries of document 2 see the keys of document 1;
- `wrong_rank` (zigzag): K/V sent to rank r − 1 and received from r + 1, the ring run backwards;
- `last_tail_off_by_one` (ring): the last document's last row left out of cu_seqlens;
- `halved_cu` (ring): cu_seqlens // 2m where cu_seqlens // m belongs (the `// 2cp` confusion).
"""

import torch

from ringproof.proofs.cp.conform import _ring_flash_attn
from ringproof.schedules.documents import VARLEN

ZIGZAG = _ring_flash_attn(VARLEN["zigzag-varlen"])
RING = _ring_flash_attn(VARLEN["ring-attention-varlen"])


def first_doc_chunk(q, k, v, cu_seqlens, max_seqlen, causal=True):
    total, chunk = int(cu_seqlens[-1]), int(cu_seqlens[1])
    cu = torch.tensor([*range(0, total, chunk), total], dtype=torch.int32)
    return ZIGZAG(q, k, v, cu, max_seqlen, causal=causal)


def sees_previous_document(q, k, v, cu_seqlens, max_seqlen, causal=True):
    cu = torch.cat([cu_seqlens[:1], cu_seqlens[2:]]) if len(cu_seqlens) > 2 else cu_seqlens
    return ZIGZAG(q, k, v, cu, int((cu[1:] - cu[:-1]).max()), causal=causal)


def wrong_rank(q, k, v, cu_seqlens, max_seqlen, causal=True):
    module = __import__(ZIGZAG.__module__, fromlist=["RingComm"])
    ring_comm = module.RingComm

    class Backwards(ring_comm):
        def __init__(self, group):
            super().__init__(group)
            self.send_rank, self.recv_rank = self.recv_rank, self.send_rank

    module.RingComm = Backwards         # this rank's process only: each rank is a fork of its own
    return ZIGZAG(q, k, v, cu_seqlens, max_seqlen, causal=causal)


def last_tail_off_by_one(q, k, v, cu_seqlens, max_seqlen, causal=True):
    cu = cu_seqlens.clone()
    cu[-1] -= 1
    return RING(q, k, v, cu, max_seqlen, causal=causal)


def halved_cu(q, k, v, cu_seqlens, max_seqlen, causal=True):
    return RING(q, k, v, cu_seqlens // 2, max(max_seqlen // 2, 1), causal=causal)
