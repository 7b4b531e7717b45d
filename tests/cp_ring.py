"""A small zigzag ring attention of our own (forward and backward over flash-attn's two kernels),
and its mutants, for `prove conform ... --impl tests/cp_ring.py:NAME`.

Rank r holds chunks r and 2m−1−r (c tokens each) of q, k, v. At ring step s it holds the K/V block
of rank h = (r − s) mod m: s = 0 its own block (causal); h < r only the first chunk of the block
counts, for all its queries; h > r the whole block counts, for its second chunk of queries. The
forward folds each block's (out, lse) into a running (out, lse) with online softmax; the backward
sends dK/dV along with K/V and brings them home with one more hop.

Mutants: `wrong_pairing` (h < r takes the block's second chunk), `no_return_hop` (dK/dV stay where
the last step left them), `mask_off_by_one` (the first-chunk case for h < r only from s < r, so the
step with h = 0 takes the other branch), `no_rescale` (the running output is not rescaled).
"""

import torch
import torch.distributed as dist
from flash_attn.flash_attn_interface import _flash_attn_backward, _flash_attn_forward


def _exchange(tensors, rank, m):
    """Send `tensors` to the next rank, receive as many from the previous; wait for both."""
    if m == 1:
        return list(tensors)
    got = [torch.empty_like(t) for t in tensors]
    ops = [dist.P2POp(dist.isend, t.contiguous(), (rank + 1) % m) for t in tensors]
    ops += [dist.P2POp(dist.irecv, g, (rank - 1) % m) for g in got]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    return got


def _fold(out, lse, rows, block_out, block_lse, rescale=True):
    """Online softmax: fold a block's (out, lse) into the running one on `rows` of the queries."""
    old_out, old_lse = out[:, rows], lse[:, :, rows]
    new_lse = torch.logaddexp(old_lse, block_lse)
    keep = torch.exp(old_lse - new_lse).transpose(1, 2).unsqueeze(-1) if rescale else 1.0
    gain = torch.exp(block_lse - new_lse).transpose(1, 2).unsqueeze(-1)
    out[:, rows] = old_out * keep + block_out.float() * gain
    lse[:, :, rows] = new_lse


def _plan(s, rank, m, c, mutant):
    """(query rows, key rows of the held block, causal) of ring step s."""
    everything, first, second = slice(None), slice(0, c), slice(c, None)
    if s == 0:
        return everything, everything, True
    low = s < rank if mutant == "mask_off_by_one" else s <= rank
    if low:
        return everything, (second if mutant == "wrong_pairing" else first), False
    return second, everything, False


def _forward(q, k, v, scale, mutant):
    rank, m = dist.get_rank(), dist.get_world_size()
    c = q.shape[1] // 2
    out = torch.zeros(q.shape, dtype=torch.float32)
    lse = torch.full((q.shape[0], q.shape[2], q.shape[1]), -torch.inf)
    for s in range(m):
        rows, keys, causal = _plan(s, rank, m, c, mutant)
        block_out, block_lse, _, _ = _flash_attn_forward(q[:, rows], k[:, keys], v[:, keys], 0.0, scale, causal)
        _fold(out, lse, rows, block_out, block_lse, rescale=mutant != "no_rescale")
        if s + 1 < m:
            k, v = _exchange((k, v), rank, m)
    return out.to(q.dtype), lse


def _backward(dout, q, k, v, out, lse, scale, mutant):
    rank, m = dist.get_rank(), dist.get_world_size()
    c = q.shape[1] // 2
    dq = torch.zeros(q.shape, dtype=torch.float32)
    dk, dv = torch.zeros(k.shape, dtype=torch.float32), torch.zeros(v.shape, dtype=torch.float32)
    for s in range(m):
        rows, keys, causal = _plan(s, rank, m, c, mutant)
        bq, bk, bv = (torch.empty_like(x) for x in (q[:, rows], k[:, keys], v[:, keys]))
        _flash_attn_backward(dout[:, rows], q[:, rows], k[:, keys], v[:, keys], out[:, rows],
                             lse[:, :, rows].contiguous(), bq, bk, bv, 0.0, scale, causal)
        dq[:, rows] += bq.float()
        dk[:, keys] += bk.float()
        dv[:, keys] += bv.float()
        if s + 1 < m:
            k, v, dk, dv = _exchange((k, v, dk, dv), rank, m)
        elif mutant != "no_return_hop":
            dk, dv = _exchange((dk, dv), rank, m)        # home: the block's own rank
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


class _Zigzag(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, scale, mutant):
        out, lse = _forward(q, k, v, scale, mutant)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.scale, ctx.mutant = scale, mutant
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse = ctx.saved_tensors
        return (*_backward(dout, q, k, v, out, lse, ctx.scale, ctx.mutant), None, None)


def _func(mutant):
    def func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=True, group=None):
        assert causal, "zigzag is causal"
        scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
        return _Zigzag.apply(q, k, v, scale, mutant)
    return func


zigzag = _func(None)
wrong_pairing = _func("wrong_pairing")
no_return_hop = _func("no_return_hop")
mask_off_by_one = _func("mask_off_by_one")
no_rescale = _func("no_rescale")
