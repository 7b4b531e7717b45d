"""One packing run concretely on the all-gather machine: the independent twin of its proof.

Each rank holds its chunk (the target's `lo`, `hi`), receives the other ranks' K and V in one
all-gather (the gathered buffer row t must be token t), runs its segments with the kernel's mask
(`rules.kernel_sees`), and, backward, accumulates dK, dV into T-row buffers that one reduce-scatter
sums onto their home ranks. `run` reports what the proof claims, read off the run: each
document-causal pair computed exactly once per head group and no other, each on its query's rank
(a rank computing a query it does not hold is a placement failure), the keys read inside the
gathered buffer, pairs per rank, data held per rank, and the numerics (forward per segment,
backward with the reduce-scatter) against a dense per-document softmax and its gradients.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ringproof.errors import BadInput
from ringproof.model.allgather import rules

MAX_TOKENS, MAX_RANKS = 4096, 64


@dataclass(frozen=True)
class AllGatherRun:
    """`first_difference` None when the run is the target's, else one line naming the packing,
    rank and pair; `broken` the property it breaks; `pairs[r]` rank r's pairs (one head group);
    `held[r]` rank r's data by array (forward, backward); `error` out, dq, dk, dv against the
    reference (largest relative)."""

    lengths: tuple
    m: int
    d: int
    first_difference: str | None
    broken: str = ""
    pairs: list = field(default_factory=list)
    held: list = field(default_factory=list)
    received: list = field(default_factory=list)
    error: dict = field(default_factory=dict)

    @property
    def per_rank(self) -> list[int]:
        return list(self.pairs)


def check(t, lengths, m: int, d: int) -> None:
    if not isinstance(m, int) or m < 1 or m > MAX_RANKS:
        raise BadInput(f"-m must be 1..{MAX_RANKS}, got {m}")
    if not isinstance(d, int) or d < 1 or d > 256:
        raise BadInput(f"-d must be 1..256, got {d}")
    t.check(lengths, m)
    if sum(lengths) > MAX_TOKENS:
        raise BadInput(f"{t.name}: {sum(lengths)} tokens; the all-gather model holds at most {MAX_TOKENS}")


def run(t, lengths, m: int, d: int = 2, seed: int = 0, groups: int = 2, numerics: bool = True) -> AllGatherRun:
    """Run target `t` forward and backward at `lengths` on m ranks, `groups` head groups."""
    lengths = tuple(int(x) for x in lengths)
    check(t, lengths, m, d)
    P = t.sizes(lengths, m)
    T, S = P.T, P.S
    label = f"lengths {','.join(map(str, lengths))}, m={m}"

    def differ(what, prop):
        return AllGatherRun(lengths, m, d, f"{label}: {what}", broken=prop)

    ranks = [t.rank(P, r) for r in range(m)]
    for R in ranks:                                   # the chunk the collectives move is the rank's
        if (int(R.lo), int(R.hi)) != rules.chunk(S, R.r):
            return differ(f"rank {R.r} holds [{R.lo}, {R.hi}), the collectives' chunk is {list(rules.chunk(S, R.r))}",
                          "well-formed")
    doc = np.repeat(np.arange(len(lengths)), lengths)
    want = (doc[:, None] == doc[None, :]) & (np.arange(T)[None, :] <= np.arange(T)[:, None])
    count = np.zeros((T, T), dtype=np.int64)
    where = np.full((T, T), -1, dtype=np.int64)       # the rank that computed the pair
    segments = [t.segments(lengths, m, r) for r in range(m)]
    pairs = []
    for R, segs in zip(ranks, segments):
        total = 0
        for i, qa, qb, ka, kb in segs:
            if not (0 <= ka and kb <= T):
                return differ(f"rank {R.r}'s segment of document {i} reads keys [{ka}, {kb}), outside the "
                              f"gathered buffer [0, {T})", "data-flow")
            qs, ks = np.arange(qa, qb)[:, None], np.arange(ka, kb)[None, :]
            seen = np.broadcast_to(np.asarray(rules.kernel_sees(qa, qb, ka, kb, qs, ks), dtype=bool), (qb - qa, kb - ka))
            if not seen.any():
                continue
            qi, ki = np.nonzero(seen)
            qq, kk = qi + qa, ki + ka
            stray = ~want[qq, kk]
            if stray.any():
                j = int(np.flatnonzero(stray)[0])
                return differ(f"rank {R.r} computes (query {qq[j]}, key {kk[j]}) in its segment of document {i}, "
                              "a pair the document-causal mask does not allow", "coverage")
            np.add.at(count, (qq, kk), 1)
            where[qq, kk] = R.r
            total += int(seen.sum())
        pairs.append(total)
    bad = want & (count != 1)
    if bad.any():
        q, k = map(int, np.argwhere(bad)[0])
        return differ(f"(query {q}, key {k}) is computed {int(count[q, k])} times, not once", "coverage")
    home = np.arange(T) // S
    off = want & (where != home[:, None])
    if off.any():
        q, k = map(int, np.argwhere(off)[0])
        return differ(f"(query {q}, key {k}) is computed on rank {int(where[q, k])}, query {q} is rank "
                      f"{int(home[q])}'s", "placement")
    held = [(rules.memory(T, S, d, False), rules.memory(T, S, d, True)) for _ in range(m)]
    received = [{"all-gather k, v": 2 * (m - 1) * S * d, "reduce-scatter dk, dv": 2 * (m - 1) * S * d}
                for _ in range(m)]
    error = {}
    if numerics:
        for g in range(groups):                        # each head group: its own inputs, the same segments
            for name, x in _numerics(segments, want, T, S, d, seed + g).items():
                error[name] = max(error.get(name, 0.0), x)
    return AllGatherRun(lengths, m, d, None, "", pairs, held, received, error)


def _numerics(segments, want, T, S, d, seed) -> dict:
    """Forward per segment on the gathered K, V; backward per segment into T-row dK, dV buffers,
    reduce-scattered (summed, rank r keeping chunk r); against the dense reference over `want`."""
    rng = np.random.default_rng(seed)
    q, k, v, dout = (rng.standard_normal((T, d)) for _ in range(4))
    scale = 1.0 / np.sqrt(d)
    m = len(segments)
    out, lse = np.zeros((T, d)), np.zeros(T)
    for r, segs in enumerate(segments):                 # the gathered buffer: row t is token t
        lo = r * S
        local_out = np.zeros((S, d))
        for _, qa, qb, ka, kb in segs:
            qs, ks = np.arange(qa, qb), np.arange(ka, kb)
            seen = np.asarray(_sees(qa, qb, ka, kb, qs[:, None], ks[None, :]))
            w = np.where(seen, q[qs] @ k[ks].T * scale, -np.inf)
            top = w.max(axis=1)
            e = np.exp(w - top[:, None])
            local_out[qs - lo] = (e / e.sum(axis=1, keepdims=True)) @ v[ks]
            lse[qs] = top + np.log(e.sum(axis=1))
        out[lo:lo + S] = local_out
    dq = np.zeros((T, d))
    buffers = []
    delta = (dout * out).sum(axis=1)
    for r, segs in enumerate(segments):
        dk_buf, dv_buf = np.zeros((T, d)), np.zeros((T, d))
        for _, qa, qb, ka, kb in segs:
            qs, ks = np.arange(qa, qb), np.arange(ka, kb)
            seen = np.asarray(_sees(qa, qb, ka, kb, qs[:, None], ks[None, :]))
            p = np.where(seen, np.exp(q[qs] @ k[ks].T * scale - lse[qs, None]), 0.0)
            ds = p * (dout[qs] @ v[ks].T - delta[qs, None])
            dq[qs] += ds @ k[ks] * scale
            dk_buf[ks] += ds.T @ q[qs] * scale
            dv_buf[ks] += p.T @ dout[qs]
        buffers.append((dk_buf, dv_buf))
    dk, dv = np.zeros((T, d)), np.zeros((T, d))
    for r in range(m):                                  # the reduce-scatter: rank r keeps chunk r
        lo, hi = rules.chunk(S, r)
        dk[lo:hi] = sum(b[0][lo:hi] for b in buffers)
        dv[lo:hi] = sum(b[1][lo:hi] for b in buffers)
    w = np.where(want, q @ k.T * scale, -np.inf)       # the dense per-document reference
    p = np.exp(w - w.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    dp = dout @ v.T
    ds = p * (dp - (p * dp).sum(axis=1, keepdims=True))
    refs = {"out": p @ v, "dq": ds @ k * scale, "dk": ds.T @ q * scale, "dv": p.T @ dout}
    got = {"out": out, "dq": dq, "dk": dk, "dv": dv}
    return {n: float(np.abs(got[n] - refs[n]).max() / max(1.0, np.abs(refs[n]).max())) for n in refs}


def _sees(qa, qb, ka, kb, qs, ks):
    return np.broadcast_to(np.asarray(rules.kernel_sees(qa, qb, ka, kb, qs, ks), dtype=bool),
                           np.broadcast_shapes(np.shape(qs), np.shape(ks)))
