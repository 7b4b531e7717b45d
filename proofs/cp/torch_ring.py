"""PyTorch's own ring attention run against a target's schedule (`prove conform TARGET --impl torch`).

PyTorch's context parallelism computes attention with `_templated_ring_attention` and
`_templated_ring_attention_backward` (torch/distributed/tensor/experimental/_context_parallel/
_attention.py), which take the per-block attention op as a parameter. Here that op is an exact CPU
stand-in in PyTorch's SDPA layout (b, h, L, d) that records every call (rank, ring step, the query
and key tokens read from the rows, and exactly the pairs its mask let through), and the two ring
functions are wrapped in one autograd Function with the signature `conform` runs:
`fn(q, k, v, causal=...)` on a rank's (1, n/m, h, d) tokens. Everything else (the process group of
forked CPU ranks, the inputs, the pair and neighbour checks, the numerics against SDPA and
autograd) is `conform.conform`'s.

Load balance is PyTorch's module option: off for ring-attention and ring-attention-causal
(contiguous blocks), on for zigzag (the head-tail layout of `_HeadTailLoadBalancer`, checked
against the target's layout before any run). Both rotate methods are run, set with PyTorch's
`set_rotate_method`:
  - "alltoall": K/V travel by `permute_tensor` (one all_to_all_single), rank r sending to group rank
    (r + 1) mod m and receiving from (r − 1) mod m: a ring-neighbour transfer, checked as one;
  - "allgather": every rank all-gathers every rank's K/V block once per pass and takes them in ring
    order from its copy: no ring-neighbour transfer of K/V happens. That is logged per rank and
    reported as a finding, not held to the ring-locality check. Its backward still sends dK/dV
    round the ring by all-to-all (PyTorch fixes that rotater), which is checked.
The ring step of a call is the number of K/V blocks the rotater delivered to the rank before it (a
delivered buffer is recognised by its rows, which are keys'), counted independently of the schedule.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass

from ringproof.errors import BadInput
from ringproof.proofs.cp import kernels
from ringproof.proofs.cp.conform import Conformance, Setup, conform

MODULE = "torch.distributed.tensor.experimental._context_parallel._attention"
INSTALL = "pip install -e '.[cp]'"

# target → PyTorch's load balance (its `_cp_options.enable_load_balance`)
TARGETS = {"ring-attention": False, "ring-attention-causal": False, "zigzag": True}

ROTATE_METHODS = ("allgather", "alltoall")


def attention_module():
    """PyTorch's context-parallel attention module; BadInput (exit 64) with the install hint."""
    try:
        import importlib

        return importlib.import_module(MODULE)
    except Exception as err:
        raise BadInput(f"--impl torch needs PyTorch 2.13 ({INSTALL}): cannot import {MODULE}: "
                       f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}") from None


def check_target(cp) -> None:
    """BadInput unless PyTorch's ring attention has a schedule for `cp`."""
    if cp.name not in TARGETS:
        raise BadInput(f"PyTorch's ring attention has no schedule for {cp.name}: expected one of "
                       f"{', '.join(TARGETS)}")


def layout_difference(cp, n: int, m: int) -> str | None:
    """Why the target's layout at (n, m) is not the one PyTorch's ring computes on, or None: the
    head-tail balancer's indices with load balance on, contiguous blocks with it off."""
    from ringproof.schedules.dsl import params

    want = [int(x) for x in cp.positions(params(n, m))]
    if TARGETS[cp.name]:
        from torch.distributed.tensor.experimental._context_parallel._load_balancer import _HeadTailLoadBalancer

        theirs = [int(x) for x in _HeadTailLoadBalancer(n, m, "cpu")._generate_indices().reshape(-1)]
        name = "_HeadTailLoadBalancer's indices"
    else:
        theirs, name = list(range(n)), "contiguous blocks (no load balancer)"
    if want == theirs:
        return None
    i = next(i for i, (a, b) in enumerate(zip(want, theirs)) if a != b)
    return (f"the layout of {cp.name} is not {name}: slot {i} (rank {i // (n // m)}) holds token "
            f"{want[i]} there, {theirs[i]} in PyTorch's")


# --------------------------------------------------------------------------- the recording op


@dataclass(frozen=True)
class MaskedCall(kernels.Call):
    """A call of the SDPA stand-in: its pairs are exactly those its mask let through."""

    allowed: tuple = ()            # (i, j) local row and column of every computed score

    def pairs(self):
        for i, j in self.allowed:
            yield self.queries[i], self.keys[j]


def allowed_mask(lq: int, lk: int, causal: bool):
    """SDPA's mask of a block (True: the score is computed): all of it, or with is_causal key
    j ≤ query i. PyTorch's ring asks is_causal only of square blocks (the rank's own, step 0);
    SDPA's causal mask of a non-square block is aligned top-left, which this stand-in refuses."""
    import torch

    if not causal:
        return torch.ones(lq, lk, dtype=torch.bool)
    if lq != lk:
        raise kernels.NotModelled(f"the CPU stand-in takes is_causal on square blocks only, got {lq}×{lk}")
    return torch.arange(lk)[None, :] <= torch.arange(lq)[:, None]


def _record(kind, q, k, allowed, causal):
    rec = kernels.RECORDER
    rows = lambda x: x.transpose(1, 2)      # noqa: E731  (b, h, L, d) → (b, L, h, d), the tables' layout
    pairs = tuple((int(i), int(j)) for i, j in allowed.nonzero().tolist())
    rec.calls.append(MaskedCall(kind, rec.rank, rec.rounds, bool(causal), rec.tokens(rows(q), rec.q_rows),
                                rec.tokens(rows(k), rec.k_rows), allowed=pairs))


def _scores(query, key, scale, causal):
    import torch

    allowed = allowed_mask(query.shape[2], key.shape[2], bool(causal))
    s = (query.double() @ key.double().transpose(-1, -2)) * scale
    return s.masked_fill(~allowed, -math.inf), allowed, torch


def sdpa_forward(query, key, value, is_causal=False, scale=None, dropout_p=0.0, **kwargs):
    """The forward op `_templated_ring_attention` calls per block, on (b, h, L, d): (out in the
    input dtype, logsumexp (b, h, Lq) in float32, as SDPA's flash op gives them), computed in
    float64. Rows with no allowed key: out 0, logsumexp −inf."""
    if dropout_p:
        raise kernels.NotModelled("the CPU stand-in computes exact attention only: no dropout")
    s, allowed, torch = _scores(query, key, _scale(query, scale), is_causal)
    _record("forward", query, key, allowed, is_causal)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return (p @ value.double()).to(query.dtype), lse.float()


def sdpa_backward(grad_out, query, key, value, out, logsumexp, is_causal=False, scale=None,
                  dropout_p=0.0, **kwargs):
    """The backward op `_templated_ring_attention_backward` calls per block: (dq, dk, dv) in the
    input dtype from P = exp(S − logsumexp) and dS = P∘(dP − D), D = rowsum(dO∘O), in float64."""
    if dropout_p:
        raise kernels.NotModelled("the CPU stand-in computes exact attention only: no dropout")
    sc = _scale(query, scale)
    s, allowed, torch = _scores(query, key, sc, is_causal)
    _record("backward", query, key, allowed, is_causal)
    lse = logsumexp.double()
    lse = lse.squeeze(-1) if lse.dim() == s.dim() else lse
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    do, o = grad_out.double(), out.double()
    dv = p.transpose(-1, -2) @ do
    ds = p * (do @ value.double().transpose(-1, -2) - (do * o).sum(-1, keepdim=True))
    dq = ds @ key.double() * sc
    dk = ds.transpose(-1, -2) @ query.double() * sc
    return dq.to(query.dtype), dk.to(key.dtype), dv.to(value.dtype)


def _scale(query, scale):
    return query.shape[-1] ** -0.5 if scale is None else scale


# --------------------------------------------------------------------------- the runner


class _State:
    """Per rank: the local K shape (to recognise a delivered K/V buffer), the pass, the
    collectives other than point-to-point seen in it, whether the hooks are in."""

    shape = None
    phase = "forward"
    gathers: list = []
    hooked = False


def _carries_kv(buffer) -> bool:
    shape = _State.shape
    size = math.prod(shape)
    if buffer is None or buffer.dim() != 1 or buffer.numel() != 2 * size:
        return False
    return kernels.RECORDER.carries_keys(buffer[:size].reshape(shape).transpose(1, 2))


class _Clocked:
    """One of PyTorch's rotaters; the clock ticks when it delivers a K/V block."""

    def __init__(self, inner):
        self._inner = inner

    def exchange_buffers(self, buffer):
        return self._inner.exchange_buffers(buffer)

    def next_buffer(self):
        out = self._inner.next_buffer()
        if _carries_kv(out):
            kernels.RECORDER.rounds += 1
        return out


def _hook(attn) -> None:
    """This rank's hooks: rotaters clocked; all_to_all_single's peers (those with a non-empty
    split) recorded for the ring check; all_gather_single logged as a gather."""
    if _State.hooked:
        return
    import torch.distributed as dist
    import torch.distributed._functional_collectives as ft_c

    create, a2a, gather = attn._create_rotater, ft_c.all_to_all_single, ft_c.all_gather_single

    def create_rotater(*args, **kwargs):
        return _Clocked(create(*args, **kwargs))

    def all_to_all_single(tensor, output_split_sizes, input_split_sizes, group, tag=""):
        m = dist.get_world_size(group)
        for what, splits in (("send", input_split_sizes), ("recv", output_split_sizes)):
            for peer in range(m):
                if splits is None or splits[peer]:
                    kernels.RECORDER.peers.append((what, peer))
        return a2a(tensor, output_split_sizes, input_split_sizes, group, tag)

    def all_gather_single(tensor, gather_dim, group, tag=""):
        _State.gathers.append([_State.phase, dist.get_world_size(group), int(tensor.numel())])
        return gather(tensor, gather_dim, group, tag)

    attn._create_rotater, ft_c.all_to_all_single, ft_c.all_gather_single = create_rotater, all_to_all_single, all_gather_single
    _State.hooked = True


class TorchRing:
    """`fn(q, k, v, causal=...)` for `conform`: PyTorch's ring forward and backward on this rank's
    (1, n/m, h, d) tokens under `rotate` and `load_balance`; each rank logs its gathers to `log`."""

    def __init__(self, rotate: str, load_balance: bool, log: str):
        self.rotate, self.load_balance, self.log = rotate, load_balance, log

    def __call__(self, q, k, v, causal=False, **kwargs):
        import torch

        attn = attention_module()
        _hook(attn)
        attn.set_rotate_method(self.rotate)
        attn._cp_options.enable_load_balance = self.load_balance
        runner = self

        class Ring(torch.autograd.Function):
            @staticmethod
            def forward(ctx, q_, k_, v_):
                import torch.distributed as dist

                qh, kh, vh = (x.transpose(1, 2).contiguous() for x in (q_, k_, v_))
                _State.shape, _State.phase, _State.gathers = tuple(kh.shape), "forward", []
                out, lse = attn._templated_ring_attention(dist.group.WORLD, 2, sdpa_forward, qh, kh, vh,
                                                          is_causal=causal)[:2]
                ctx.save_for_backward(qh, kh, vh, out, lse)
                return out.transpose(1, 2)

            @staticmethod
            def backward(ctx, dout):
                import torch.distributed as dist

                qh, kh, vh, out, lse = ctx.saved_tensors
                _State.phase = "backward"
                dq, dk, dv = attn._templated_ring_attention_backward(
                    dist.group.WORLD, 2, sdpa_backward, grad_out=dout.transpose(1, 2).contiguous(),
                    grad_out_name="grad_out", query=qh, key=kh, value=vh, out=out, logsumexp=lse,
                    is_causal=causal)[:3]
                runner._write_log(q_len=qh.shape[2])
                return dq.transpose(1, 2), dk.transpose(1, 2), dv.transpose(1, 2)

        return Ring.apply(q, k, v)

    def _write_log(self, q_len):
        import torch.distributed as dist

        rank, m = dist.get_rank(), dist.get_world_size()
        with open(os.path.join(self.log, f"{self.rotate}-{m}-{q_len * m}-{rank}.json"), "w") as f:
            json.dump({"gathers": _State.gathers,
                       "sends": sorted({peer for what, peer in kernels.RECORDER.peers if what == "send"})}, f)


@dataclass
class Run:
    """One rotate method's result, and what every rank logged of its collectives per (m, n)."""

    rotate: str
    result: Conformance
    logs: dict               # (m, n) → [per rank: {"gathers": [[pass, group size, elements], ...],
                             #                      "sends": [peers sent to]} or None]


def conform_torch(cp, world_sizes, ns, setup: Setup = Setup(), methods=ROTATE_METHODS) -> list[Run]:
    """PyTorch's ring attention under every rotate method of `methods`, at every world size and
    n (as `conform.conform` chooses them), stopping at the first method with a difference or no
    answer. A target layout PyTorch does not compute on is a 'layout' difference before any run."""
    check_target(cp)
    attention_module()
    from ringproof.proofs.cp.conform import Difference

    for m in world_sizes:
        sizes = sorted({cp.unit(m), 16 * m}) if ns is None else [n for n in ns if cp.valid(n, m)]
        for n in sizes:
            why = layout_difference(cp, n, m)
            if why is not None:
                result = Conformance(cp.name, "torch", difference=Difference(m, n, "layout", why))
                return [Run(methods[0], result, {})]
    runs = []
    for rotate in methods:
        with tempfile.TemporaryDirectory(prefix="ringproof-torch-") as log:
            result = conform(cp, TorchRing(rotate, TARGETS[cp.name], log), "torch", world_sizes, ns, setup)
            logs = {(m, n): [_read(os.path.join(log, f"{rotate}-{m}-{n}-{r}.json")) for r in range(m)]
                    for m, n, *_ in result.runs}
        runs.append(Run(rotate, result, logs))
        if not result.ok:
            break
    return runs


def _read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def communication(rotate: str, m: int, logs) -> str:
    """What the ranks' logs say of the K/V transfer at world size m, in a few words: the checked
    ring-locality of the point-to-point traffic and, under allgather, the gathers (a finding, not
    a pass or fail of the ring check)."""
    if any(log is None for log in logs):
        return "ring-local (a rank logged no collectives)"
    if m == 1:
        return ("one rank: its backward's dK/dV all-to-all sends to itself" if logs[0]["sends"]
                else "one rank: no communication")
    gathers = {(phase, size) for log in logs for phase, size, _ in log["gathers"]}
    counts = {sum(1 for g in log["gathers"] if g[0] == phase) for log in logs for phase in ("forward", "backward")}
    if not gathers:
        return "ring-local: K/V and dK/dV sent to rank (r + 1) mod m only, received from (r − 1) mod m"
    per_pass = f"{counts.pop()} all-gather" if len(counts) == 1 else "all-gathers"
    return (f"K/V all-gathered ({per_pass} of all {m} blocks per pass on every rank: not a ring-neighbour "
            f"transfer); dK/dV ring-local (sent to rank (r + 1) mod m only)")
