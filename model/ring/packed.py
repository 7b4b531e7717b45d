"""The ring pass of a varlen schedule at one packing, run concretely: the independent twin of its proof.

Rank r holds its slots of every document (`Varlen.positions`); the key/value block it holds at ring
step s (1-based) is the one its predecessor held at step s − 1 (step 1: its own), so every block
moves one hop a step and nothing else is ever received. At each step a rank computes the pairs
(query slot, key slot of the held block) its `mask` allows, folds them into a running softmax
(forward) or into dq and the travelling dk, dv (backward, with the forward's log-sum-exp); after
the last step one more hop brings dk, dv home.

`run` reports what the proof claims, read off the run, not from the formulas: each pair of the
document-causal mask over real tokens computed exactly once and no other, the block each rank holds
at each step (and the owner/slot formulas at every token), the pairs per rank and ring step, and the
numerics against a dense per-document reference (softmax and its gradients written directly).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from ringproof.errors import BadInput

MAX_TOKENS = 4096        # T: the pair matrices are T × T
MAX_RANKS = 64


@dataclass(frozen=True)
class PackedRun:
    """What one run found: `first_difference` None when the run is the schedule's, else one line
    naming the packing, rank, ring step and pair; `pairs[s][r]` the pairs rank r computes at step s
    (0-based s); `error` the largest relative error of out (and dq, dk, dv) against the reference."""

    lengths: tuple
    m: int
    d: int
    first_difference: str | None
    pairs: list = field(default_factory=list)
    error: dict = field(default_factory=dict)
    broken: str = ""                        # the property the difference breaks

    @property
    def per_rank(self) -> list[int]:
        return [sum(step[r] for step in self.pairs) for r in range(self.m)]


def check_packing(v, lengths, m: int, d: int = 1) -> None:
    """Bad input (one line) unless the packing is one `v` is defined for and the model holds."""
    if not isinstance(m, int) or m < 1 or m > MAX_RANKS:
        raise BadInput(f"-m must be 1..{MAX_RANKS}, got {m}")
    if not isinstance(d, int) or d < 1 or d > 256:
        raise BadInput(f"-d must be 1..256, got {d}")
    if not v.valid(lengths, m):
        bad = next((i for i, length in enumerate(lengths) if length % v.unit(m)), 0)
        raise BadInput(f"{v.name} needs {v.requires_text}: document {bad + 1} has {lengths[bad]} tokens at m={m}")
    total = sum(v.padded_lengths(lengths, m))
    if total > MAX_TOKENS:
        raise BadInput(f"{v.name}: {total} tokens in all; the packed ring model holds at most {MAX_TOKENS}")


def _records(v, lengths, m, tokens):
    """Array-valued document records of `tokens` (what the mask reads: i, c, real, …)."""
    docs = v.documents(lengths, m)
    which = v.document(lengths, m)[tokens]
    return SimpleNamespace(**{name: np.asarray([getattr(P, name) for P in docs])[which]
                              for name in ("i", "c", "o", "real", "n", "m", "k")})


def run(v, lengths, m: int, d: int = 2, seed: int = 0, numerics: bool = True, relaxed: bool = False) -> PackedRun:
    """Run `v`'s ring pass forward and backward at `lengths` on m ranks (head dimension d);
    `relaxed`: also where the side condition fails (its formulas' floors taken as they come), to
    show what breaks without it."""
    lengths = tuple(int(x) for x in lengths)
    if not relaxed:
        check_packing(v, lengths, m, d)
    full = v.padded_lengths(lengths, m)
    T = sum(full)
    label = f"lengths {','.join(map(str, lengths))}, m={m}"

    def differ(what, prop):
        return PackedRun(lengths, m, d, f"{label}: {what}", broken=prop)

    records = v.documents(lengths, m)
    pos = [[np.asarray(v.token(P, r, np.arange(P.k, dtype=np.int64)), dtype=np.int64) for P in records]
           for r in range(m)]
    pos = [np.concatenate(row) if row else np.zeros(0, dtype=np.int64) for row in pos]
    if len({len(row) for row in pos}) != 1 or sum(map(len, pos)) != T:
        held = [len(row) for row in pos]
        return differ(f"the ranks hold {held} slots of the {T} tokens", "coverage")
    pos = np.stack(pos)                                        # rank r's tokens in local order
    doc, real = v.document(lengths, m), v.real(lengths, m)
    seen = np.zeros(T, dtype=np.int64)
    inside = (pos >= 0) & (pos < T)
    if not inside.all():
        r, j = map(int, np.argwhere(~inside)[0])
        return differ(f"rank {r}'s slot {j} holds token {int(pos[r, j])}, outside the packed sequence", "coverage")
    np.add.at(seen, pos.reshape(-1), 1)
    if (seen != 1).any():
        t = int(np.flatnonzero(seen != 1)[0])
        return differ(f"token {t} is held by {int(seen[t])} ranks, not one", "coverage")
    rank_of, slot_of = np.empty(T, dtype=np.int64), np.empty(T, dtype=np.int64)
    rank_of[pos.reshape(-1)] = np.repeat(np.arange(m), pos.shape[1])
    slot_of[pos.reshape(-1)] = np.tile(np.arange(pos.shape[1]), m)
    for P in records:
        ts = np.arange(P.c, P.c + P.n, dtype=np.int64)
        o = np.broadcast_to(np.asarray(v.owner(P, ts)), ts.shape)
        s = np.broadcast_to(np.asarray(v.slot(P, ts)), ts.shape)
        bad = np.flatnonzero((o != rank_of[ts]) | (s != slot_of[ts]))
        if len(bad):
            t = int(ts[bad[0]])
            return differ(f"token {t} is in rank {int(rank_of[t])}'s slot {int(slot_of[t])}, its owner/slot "
                          f"formulas say rank {int(o[bad[0]])}, slot {int(s[bad[0]])}", "placement")
    want = (doc[:, None] == doc[None, :]) & real[:, None] & real[None, :]
    if v.causal:
        want &= np.arange(T)[None, :] <= np.arange(T)[:, None]

    held = list(range(m))               # held[r]: whose block rank r holds
    count = np.zeros((T, T), dtype=np.int64)
    pairs = []
    for s in range(m):
        if s:
            held = [held[(r - 1) % m] for r in range(m)]      # one hop from the predecessor
        row = []
        for r in range(m):
            if held[r] != (r - s) % m:
                return differ(f"rank {r} holds rank {held[r]}'s block at ring step {s + 1}, not rank {(r - s) % m}'s",
                              "ring-locality")
            qs, ks = pos[r], pos[held[r]]
            Q, K = _records(v, lengths, m, qs[:, None]), _records(v, lengths, m, ks[None, :])
            mask = np.broadcast_to(np.asarray(v.mask(Q, K, qs[:, None], ks[None, :]), dtype=bool), (len(qs), len(ks)))
            stray = mask & ~want[np.ix_(qs, ks)]
            if stray.any():
                a, b = map(int, np.argwhere(stray)[0])
                return differ(f"rank {r} at ring step {s + 1} computes (query {int(qs[a])}, key {int(ks[b])}), "
                              "a pair the document-causal mask does not allow", "coverage")
            count[np.ix_(qs, ks)] += mask
            row.append(int(mask.sum()))
        pairs.append(row)
    if (count[want] != 1).any():
        q, k = map(int, np.argwhere(want & (count != 1))[0])
        return differ(f"(query {q}, key {k}) is computed {int(count[q, k])} times, not once", "coverage")
    error = _numerics(v, lengths, m, d, seed, pos, want) if numerics else {}
    return PackedRun(lengths, m, d, None, pairs, error)


def _numerics(v, lengths, m, d, seed, pos, want) -> dict:
    """Forward by blocks with online softmax and backward by blocks with the forward's
    log-sum-exp, against dense softmax attention and its gradients over the mask `want`."""
    T = want.shape[0]
    rng = np.random.default_rng(seed)
    q, k, val, dout = (rng.standard_normal((T, d)) for _ in range(4))
    scale = 1.0 / np.sqrt(d)
    out, lse = np.zeros((T, d)), np.full(T, -np.inf)
    top, total = np.full(T, -np.inf), np.zeros(T)
    for s in range(m):                              # forward: fold block s into each rank's rows
        for r in range(m):
            qs, ks = pos[r], pos[(r - s) % m]
            w = np.where(want[np.ix_(qs, ks)], q[qs] @ k[ks].T * scale, -np.inf)
            new = np.maximum(top[qs], w.max(axis=1))
            safe = np.where(np.isfinite(new), new, 0.0)
            keep = np.where(np.isfinite(top[qs]), np.exp(top[qs] - safe), 0.0)
            e = np.exp(w - safe[:, None])
            out[qs] = out[qs] * keep[:, None] + e @ val[ks]
            total[qs] = total[qs] * keep + e.sum(axis=1)
            top[qs] = new
    rows = total > 0
    out[rows] /= total[rows, None]
    lse[rows] = top[rows] + np.log(total[rows])
    dq, dk, dv = np.zeros((T, d)), np.zeros((T, d)), np.zeros((T, d))
    delta = (dout * out).sum(axis=1)
    for s in range(m):                              # backward: dk, dv travel with their block
        for r in range(m):
            qs, ks = pos[r], pos[(r - s) % m]
            p = np.where(want[np.ix_(qs, ks)], np.exp(q[qs] @ k[ks].T * scale - np.where(rows[qs], lse[qs], 0.0)[:, None]), 0.0)
            dp = dout[qs] @ val[ks].T
            ds = p * (dp - delta[qs, None])
            dq[qs] += ds @ k[ks] * scale
            dk[ks] += ds.T @ q[qs] * scale
            dv[ks] += p.T @ dout[qs]
    # the dense reference
    w = np.where(want, q @ k.T * scale, -np.inf)
    big = np.where(rows, w.max(axis=1), 0.0)
    p = np.where(want, np.exp(w - big[:, None]), 0.0)
    z = p.sum(axis=1)
    p[rows] /= z[rows, None]
    ref = p @ val
    dp = dout @ val.T
    ds = p * (dp - (p * dp).sum(axis=1, keepdims=True))
    refs = {"out": ref, "dq": ds @ k * scale, "dk": ds.T @ q * scale, "dv": p.T @ dout}
    got = {"out": out, "dq": dq, "dk": dk, "dv": dv}
    return {name: float(np.abs(got[name] - refs[name]).max() / max(1.0, np.abs(refs[name]).max())) for name in refs}
