"""Exact CPU stand-ins for flash-attn's `_flash_attn_forward` / `_flash_attn_backward` and their
varlen forms `_flash_attn_varlen_forward` / `_flash_attn_varlen_backward`, which record every call,
and a ring clock over torch.distributed's point-to-point calls.

A ring-attention library calls the kernels on blocks of its local queries and of the K/V block
that has travelled to it. The stand-ins compute the same results in float64 (scores, the mask
flash-attn uses: key j of a block of Lk allowed for query i of a block of Lq when not causal or
j ≤ i + Lk − Lq, the log-sum-exp, and for the backward dS = P∘(dP − D), D = rowsum(dO∘O)), and
record a `Call`: the rank, the ring step, the kernel's causal flag and the global query and key
tokens, read from the rows themselves (every token's q and k rows are distinct, and the ring moves
them bit for bit).

The ring step of a call is the number of communication rounds that brought K/V data to this rank
and completed before the call (`Clock`): the library's ring exchanges are counted as they happen,
independently of the schedule they are compared with. Every peer a rank sends to or receives from
is recorded too (ring-locality: only the next rank, only from the previous one), and so is every
collective (`Collective`: all-gather, reduce-scatter, ...), for the all-gather machine's check.

A call on some heads only (a library that runs its heads in groups, as llama3's `heads_k_stride`)
is named by its rows too: the heads of a row are the contiguous range [a, b) of the global tensor
whose slice of a token's row it is (the inputs make every such slice distinct).
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass, field


class NotModelled(RuntimeError):
    """A kernel feature the CPU stand-ins do not compute (paged KV, dropout, …): raised in the
    implementation's call, so the run reports that call as the implementation's error, never a
    silent result."""


@dataclass(frozen=True)
class Call:
    """One kernel call: `kind` 'forward' or 'backward'; tokens are global 0-based positions (−1 for
    a row that is no token's)."""

    kind: str
    rank: int
    step: int
    causal: bool
    queries: tuple
    keys: tuple
    heads: tuple = ()              # (first, end) head of the query rows; () for rows of no head range
    key_heads: tuple = ()          # the same for the key rows

    def pairs(self):
        """The (query, key) pairs the call computes, with flash-attn's bottom-right causal mask."""
        lq, lk = len(self.queries), len(self.keys)
        for i, qt in enumerate(self.queries):
            for j, kt in enumerate(self.keys):
                if not self.causal or j <= i + lk - lq:
                    yield qt, kt


@dataclass
class Collective:
    """One collective a rank made: `kind` ('all-gather', 'reduce-scatter', or the torch.distributed
    name of any other), the pass, the array moved ('k', 'v' read from the rows; 'dk', 'dv' the
    buffer the backward kernel wrote them into; '' unknown) and its heads, the rows in and out,
    the group's size, the kernel calls recorded when it was issued and when it completed (None:
    never waited on), and for an all-gather the tokens of the gathered rows."""

    kind: str
    phase: str
    array: str = ""
    heads: tuple = ()
    rows_in: int = 0
    rows_out: int = 0
    group: int = 0
    issued: int = 0
    done: int | None = None
    gathered: tuple = ()


@dataclass
class Recorder:
    """What one rank's stand-ins see: the row tables of the current run, the calls, the peers, the
    collectives."""

    rank: int = 0
    q_rows: dict = field(default_factory=dict)
    k_rows: dict = field(default_factory=dict)
    v_rows: dict = field(default_factory=dict)
    calls: list = field(default_factory=list)
    peers: list = field(default_factory=list)       # (what, peer) of every point-to-point call
    collectives: list = field(default_factory=list)
    grad_buffers: list = field(default_factory=list)  # (first byte, array, heads) a backward kernel wrote
    rounds: int = 0                                  # completed rounds that delivered K/V data
    phase: str = "forward"
    full: dict = field(default_factory=dict)
    slices: dict = field(default_factory=dict)

    def start(self, q, k, v=None):
        """A new run on global q, k (and v) (batch 1): the tables that name rows, a clock at zero."""
        self.full = {"q": q, "k": k, "v": v}
        self.q_rows = {row_bytes(q, t): t for t in range(q.shape[1])}
        self.k_rows = {row_bytes(k, t): t for t in range(k.shape[1])}
        self.v_rows = {} if v is None else {row_bytes(v, t): t for t in range(v.shape[1])}
        self.slices = {}
        self.collectives, self.grad_buffers = [], []
        self.rounds, self.phase = 0, "forward"

    def tokens(self, x, table):
        """The global tokens of the rows of x: (b, L, h, d), or (L, h, d) as varlen kernels take."""
        x = x.unsqueeze(0) if x.dim() == 3 else x
        return tuple(table.get(row_bytes(x, t), -1) for t in range(x.shape[1]))

    def locate(self, x, which: str):
        """(tokens, heads) of the rows of x, a slice of the global `which` ('q', 'k', 'v'): the
        heads the contiguous range [a, b) whose slices its rows are, () when none is."""
        x = x.unsqueeze(0) if x.dim() == 3 else x
        full = self.full.get(which)
        table = {"q": self.q_rows, "k": self.k_rows, "v": self.v_rows}[which]
        if full is None or x.dim() != 4 or x.shape[2] == full.shape[2] or x.shape[1] == 0:
            tokens = self.tokens(x, table)
            return tokens, ((0, full.shape[2]) if full is not None and any(t >= 0 for t in tokens) else ())
        width = x.shape[2]
        first = row_bytes(x, 0)
        for a in range(full.shape[2] - width + 1):
            sliced = self._slice(which, a, width)
            if first in sliced:
                return tuple(sliced.get(row_bytes(x, t), -1) for t in range(x.shape[1])), (a, a + width)
        return (-1,) * x.shape[1], ()

    def _slice(self, which, a, width):
        key = (which, a, width)
        if key not in self.slices:
            full = self.full[which][:, :, a:a + width]
            self.slices[key] = {row_bytes(full, t): t for t in range(full.shape[1])}
        return self.slices[key]

    def carries_keys(self, tensor) -> bool:
        tensor = tensor.unsqueeze(0) if tensor.dim() == 3 else tensor
        return tensor.dim() >= 2 and tensor.shape[0] >= 1 and tensor.shape[1] >= 1 \
            and row_bytes(tensor, 0) in self.k_rows


RECORDER = Recorder()


def row_bytes(x, t) -> bytes:
    """The bytes of token t's row (all heads) of x (b, L, h, d): its name in the tables. `conform`
    draws its inputs until these names are distinct, so that every row names one token."""
    import torch

    return x[0, t].detach().contiguous().cpu().flatten().view(torch.uint8).numpy().tobytes()


def _attention(q, k, v, scale, causal):
    """Scores, the allowed mask and probabilities in float64; shapes (b, L, h, d) → (b, h, Lq, Lk)."""
    import torch

    q64, k64 = q.double().transpose(1, 2), k.double().transpose(1, 2)
    s = q64 @ k64.transpose(-1, -2) * scale
    lq, lk = q.shape[1], k.shape[1]
    allowed = torch.ones(lq, lk, dtype=torch.bool)
    if causal:
        allowed = torch.arange(lk)[None, :] <= torch.arange(lq)[:, None] + (lk - lq)
    s = s.masked_fill(~allowed, -math.inf)
    return s, allowed


def flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal, window_size_left=-1,
                       window_size_right=-1, softcap=0.0, alibi_slopes=None, return_softmax=False):
    """flash-attn 2.6's `_flash_attn_forward`: (out, softmax_lse, S_dmask, rng_state)."""
    import torch

    _refuse_extras(dropout_p, window_size_left, window_size_right, softcap, alibi_slopes)
    _record("forward", q, k, causal)
    s, _ = _attention(q, k, v, softmax_scale, causal)
    lse = torch.logsumexp(s, dim=-1)                                   # (b, h, Lq)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)                   # rows with no key: 0
    out = (p @ v.double().transpose(1, 2)).transpose(1, 2)
    return out.to(q.dtype).contiguous(), lse.float(), None, None


def flash_attn_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, dropout_p, softmax_scale, causal,
                        window_size_left=-1, window_size_right=-1, softcap=0.0, alibi_slopes=None,
                        deterministic=False, rng_state=None):
    """flash-attn 2.6's `_flash_attn_backward`: writes dq, dk, dv; returns (dq, dk, dv, softmax_d)."""
    import torch

    _refuse_extras(dropout_p, window_size_left, window_size_right, softcap, alibi_slopes)
    _record("backward", q, k, causal)
    s, _ = _attention(q, k, v, softmax_scale, causal)
    p = torch.exp(s - softmax_lse.double()[..., None]).nan_to_num(0.0)     # P from the given lse
    do = dout.double().transpose(1, 2)                                     # (b, h, Lq, d)
    o = out.double().transpose(1, 2)
    dv_ = p.transpose(-1, -2) @ do
    dp = do @ v.double().transpose(1, 2).transpose(-1, -2)
    d_row = (do * o).sum(-1, keepdim=True)                                 # D = rowsum(dO∘O)
    ds = p * (dp - d_row)
    dq_ = ds @ k.double().transpose(1, 2) * softmax_scale
    dk_ = ds.transpose(-1, -2) @ q.double().transpose(1, 2) * softmax_scale
    dq.copy_(dq_.transpose(1, 2))
    dk.copy_(dk_.transpose(1, 2))
    dv.copy_(dv_.transpose(1, 2))
    return dq, dk, dv, d_row.squeeze(-1).float()


def _sequences(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k):
    """The (query rows, key rows) of each sequence of a varlen call. ValueError where flash-attn
    would read or write outside its tensors or skip rows: prefix sums that are not non-decreasing
    from 0, that end past the rows given, of unequal counts, or a sequence longer than max_seqlen."""
    cq, ck = (list(map(int, c.tolist() if hasattr(c, "tolist") else c)) for c in (cu_seqlens_q, cu_seqlens_k))
    if len(cq) != len(ck) or len(cq) < 2:
        raise ValueError(f"cu_seqlens_q has {len(cq)} entries, cu_seqlens_k {len(ck)}: one batch of sequences needs "
                         "as many of each, at least 2")
    for name, cu, rows, cap in (("q", cq, q.shape[0], max_seqlen_q), ("k", ck, k.shape[0], max_seqlen_k)):
        if cu[0] != 0 or any(b < a for a, b in zip(cu, cu[1:])) or cu[-1] > rows:
            raise ValueError(f"cu_seqlens_{name} {cu} does not cut the {rows} rows of {name} into sequences "
                             "(0 first, non-decreasing, at most the rows given)")
        longest = max(b - a for a, b in zip(cu, cu[1:]))
        if longest > int(cap):
            raise ValueError(f"a sequence of {longest} rows of {name} beyond max_seqlen_{name} = {int(cap)}")
    return [(slice(a, b), slice(c, d)) for a, b, c, d in zip(cq, cq[1:], ck, ck[1:])]


def flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p,
                              softmax_scale, causal, window_size_left=-1, window_size_right=-1, softcap=0.0,
                              alibi_slopes=None, return_softmax=False, block_table=None, leftpad_k=None,
                              seqused_k=None):
    """flash-attn 2.6's `_flash_attn_varlen_forward` on (total, h, d) rows cut into sequences by
    the prefix sums: each sequence attends its own keys, causal with the bottom-right mask of its
    own lengths. Returns (out, softmax_lse of shape (h, total_q), S_dmask, rng_state); rows that
    no sequence covers get out 0 and lse −inf."""
    import torch

    _refuse_extras(dropout_p, window_size_left, window_size_right, softcap, alibi_slopes)
    if block_table is not None or leftpad_k is not None or seqused_k is not None:
        raise NotModelled("the CPU stand-in takes no paged KV cache, leftpad_k or seqused_k")
    out = torch.zeros(q.shape, dtype=torch.float64)
    lse = torch.full((q.shape[1], q.shape[0]), -math.inf, dtype=torch.float64)
    for rows, keys in _sequences(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k):
        qs, ks, vs = q[None, rows], k[None, keys], v[None, keys]
        _record("forward", qs, ks, causal)
        s, _ = _attention(qs, ks, vs, softmax_scale, causal)
        block_lse = torch.logsumexp(s, dim=-1)                          # (1, h, Lq)
        p = torch.exp(s - block_lse[..., None]).nan_to_num(0.0)
        out[rows] = (p @ vs.double().transpose(1, 2)).transpose(1, 2)[0]
        lse[:, rows] = block_lse[0]
    return out.to(q.dtype).contiguous(), lse.float(), None, None


def flash_attn_varlen_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, cu_seqlens_q, cu_seqlens_k,
                               max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale, causal,
                               window_size_left=-1, window_size_right=-1, softcap=0.0, alibi_slopes=None,
                               deterministic=False, rng_state=None):
    """flash-attn 2.6's `_flash_attn_varlen_backward`: P from the given lse (h, total_q), per
    sequence; writes dq, dk, dv (0 on rows no sequence covers); returns (dq, dk, dv, softmax_d)."""
    import torch

    _refuse_extras(dropout_p, window_size_left, window_size_right, softcap, alibi_slopes)
    grads = [torch.zeros(x.shape, dtype=torch.float64) for x in (q, k, v)]
    d_all = torch.zeros((q.shape[1], q.shape[0]), dtype=torch.float64)
    for rows, keys in _sequences(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k):
        qs, ks, vs = q[None, rows], k[None, keys], v[None, keys]
        _record("backward", qs, ks, causal)
        s, _ = _attention(qs, ks, vs, softmax_scale, causal)
        p = torch.exp(s - softmax_lse[None, :, rows].double()[..., None]).nan_to_num(0.0)
        do = dout[None, rows].double().transpose(1, 2)
        o = out[None, rows].double().transpose(1, 2)
        dp = do @ vs.double().transpose(1, 2).transpose(-1, -2)
        d_row = (do * o).sum(-1, keepdim=True)
        ds = p * (dp - d_row)
        grads[0][rows] = (ds @ ks.double().transpose(1, 2) * softmax_scale).transpose(1, 2)[0]
        grads[1][keys] += (ds.transpose(-1, -2) @ qs.double().transpose(1, 2) * softmax_scale).transpose(1, 2)[0]
        grads[2][keys] += (p.transpose(-1, -2) @ do).transpose(1, 2)[0]
        d_all[:, rows] = d_row[0, :, :, 0]
    for buffer, grad in zip((dq, dk, dv), grads):
        buffer.copy_(grad)
    heads = RECORDER.locate(q, "q")[1]
    RECORDER.grad_buffers += [(dk.data_ptr(), "dk", heads), (dv.data_ptr(), "dv", heads)]
    return dq, dk, dv, d_all.float()


def _refuse_extras(dropout_p, left, right, softcap, alibi):
    if dropout_p or left != -1 or right != -1 or softcap or alibi is not None:
        raise NotModelled("the CPU stand-in computes exact attention only: no dropout, "
                                  "sliding window, softcap or ALiBi")


def _record(kind, q, k, causal):
    r = RECORDER
    (queries, heads), (keys, key_heads) = r.locate(q, "q"), r.locate(k, "k")
    r.calls.append(Call(kind, r.rank, r.rounds, bool(causal), queries, keys, heads, key_heads))


def flash_attn_module() -> types.ModuleType:
    """A `flash_attn` package whose `flash_attn_interface` holds the stand-ins."""
    package = types.ModuleType("flash_attn")
    package.__path__ = []
    interface = types.ModuleType("flash_attn.flash_attn_interface")
    interface._flash_attn_forward = flash_attn_forward
    interface._flash_attn_backward = flash_attn_backward
    interface._flash_attn_varlen_forward = flash_attn_varlen_forward
    interface._flash_attn_varlen_backward = flash_attn_varlen_backward
    package.flash_attn_interface = interface
    return package


# --------------------------------------------------------------------------- the ring clock


class _Work:
    """A request whose wait() ticks the clock once every request of its round has completed."""

    def __init__(self, work, round_):
        self._work, self._round = work, round_

    def wait(self, *args, **kwargs):
        out = self._work.wait(*args, **kwargs)
        self._round.done(self)
        return out

    def __getattr__(self, name):
        return getattr(self._work, name)


class _Round:
    """One round of point-to-point requests; it ticks the clock when it completes and delivered
    K/V data (a received tensor whose first row is a key's)."""

    def __init__(self, received):
        self.received, self.pending = received, None

    def done(self, work):
        self.pending.discard(id(work))
        if not self.pending:
            self.pending = {None}              # tick once
            if any(RECORDER.carries_keys(t) for t in self.received):
                RECORDER.rounds += 1


def install_clock(dist) -> None:
    """Wrap this process's torch.distributed.batch_isend_irecv (what ring libraries exchange K/V
    with) and its blocking send/recv with the clock and the record of peers. (isend/irecv stay as
    they are: P2POp accepts only torch's own; a library that waits on bare irecv requests instead
    of a batch is not clocked, and every call of it reads as step 0.)"""
    batch, send, recv = dist.batch_isend_irecv, dist.send, dist.recv

    def batch_isend_irecv(ops):
        received = []
        for op in ops:
            receives = op.op is not dist.isend
            RECORDER.peers.append(("recv" if receives else "send", int(op.peer)))
            if receives:
                received.append(op.tensor)
        round_ = _Round(received)
        works = [_Work(w, round_) for w in batch(ops)]
        round_.pending = {id(w) for w in works}
        return works

    def send_(tensor, dst, *args, **kwargs):
        RECORDER.peers.append(("send", int(dst)))
        return send(tensor, dst, *args, **kwargs)

    def recv_(tensor, src=None, *args, **kwargs):
        RECORDER.peers.append(("recv", -1 if src is None else int(src)))
        out = recv(tensor, src, *args, **kwargs)
        if RECORDER.carries_keys(tensor):
            RECORDER.rounds += 1
        return out

    dist.batch_isend_irecv, dist.send, dist.recv = batch_isend_irecv, send_, recv_
    _install_collectives(dist)


# the collectives that move data, besides the two the all-gather machine makes (recorded by kind only)
OTHER_COLLECTIVES = ("all_reduce", "all_gather", "broadcast", "reduce", "reduce_scatter", "all_to_all",
                     "all_to_all_single", "gather", "scatter")


class _Completion:
    """A collective's request: wait() marks it done (and reads an all-gather's rows) once."""

    def __init__(self, work, finish):
        self._work, self._finish = work, finish

    def wait(self, *args, **kwargs):
        out = self._work.wait(*args, **kwargs)
        self._finish()
        return out

    def __getattr__(self, name):
        return getattr(self._work, name)


def _install_collectives(dist) -> None:
    """Wrap this process's collectives so that each is recorded (`Collective`): all_gather_into_tensor
    with the array and heads of its input and the tokens of its gathered rows, reduce_scatter_tensor
    with the gradient buffer its input holds, every other data-moving collective by its name."""
    import warnings

    # torch names these two deprecated; they are what ring-flash-attn calls, and the ranks' stderr is the user's
    warnings.filterwarnings("ignore", message=r".*(all_gather_into_tensor|reduce_scatter_tensor)` is deprecated",
                            category=FutureWarning)
    gather, scatter = dist.all_gather_into_tensor, dist.reduce_scatter_tensor

    def rows(x):
        return int(x.shape[0]) if x.dim() else 0

    def issue(record, run, work_or_none, async_op, finish=lambda: None):
        RECORDER.collectives.append(record)

        def done():
            if record.done is None:
                record.done = len(RECORDER.calls)
                finish()
        if async_op and work_or_none is not None:
            return _Completion(work_or_none, done)
        done()
        return work_or_none

    def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
        array, heads = "", ()
        for which in ("k", "v"):
            tokens, found = RECORDER.locate(input_tensor, which) if input_tensor.dim() == 3 else ((), ())
            if found and all(t >= 0 for t in tokens):
                array, heads = which, found
                break
        record = Collective("all-gather", RECORDER.phase, array, heads, rows(input_tensor), rows(output_tensor),
                            dist.get_world_size(group), len(RECORDER.calls))

        def read():
            if array and output_tensor.dim() == 3:
                record.gathered = RECORDER.locate(output_tensor, array)[0]
        work = gather(output_tensor, input_tensor, group=group, async_op=async_op)
        return issue(record, None, work, async_op, read)

    def reduce_scatter_tensor(output, input, op=dist.ReduceOp.SUM, group=None, async_op=False):
        start = input.data_ptr()
        end = start + input.numel() * input.element_size()
        array, heads = next(((name, h) for ptr, name, h in reversed(RECORDER.grad_buffers) if start <= ptr < end),
                            ("", ()))
        record = Collective("reduce-scatter", RECORDER.phase, array, heads, rows(input), rows(output),
                            dist.get_world_size(group), len(RECORDER.calls))
        work = scatter(output, input, op=op, group=group, async_op=async_op)
        return issue(record, None, work, async_op)

    def other(name, fn):
        def wrapped(*args, **kwargs):
            RECORDER.collectives.append(Collective(name.replace("_", "-"), RECORDER.phase,
                                                   issued=len(RECORDER.calls), done=len(RECORDER.calls)))
            return fn(*args, **kwargs)
        return wrapped

    dist.all_gather_into_tensor, dist.reduce_scatter_tensor = all_gather_into_tensor, reduce_scatter_tensor
    for name in OTHER_COLLECTIVES:
        if hasattr(dist, name):
            setattr(dist, name, other(name, getattr(dist, name)))
