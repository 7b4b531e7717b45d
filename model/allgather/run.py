"""One packing run concretely on the all-gather machine: the independent twin of its proof.

Each rank holds its chunk (the target's `lo`, `hi`) of q, k, v and runs the head groups one after
another (`rules.group_kv`, `rules.group_q`): per group it receives the other ranks' K and V into a
T-row buffer (the all-gather: row t is token t), the next group's into a second one, and runs its
segments with the kernel's mask (`rules.kernel_sees`), each query head against the KV head it reads
(`rules.kv_head`), which must be one its group gathered. Backward, per group, it accumulates dK, dV
into a T-row buffer that one reduce-scatter sums onto the home ranks. `run` reports what the proof
claims, read off the run: each document-causal pair computed exactly once per query head and no
other, on its query's rank, keys read inside the gathered buffer, pairs per rank, the elements
each rank holds (measured as the model allocates its arrays: `Ledger`) and receives, and the
numerics (forward per segment, backward through the reduce-scatter) against a dense
per-document softmax and its gradients, GQA included.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ringproof.errors import BadInput
from ringproof.model.allgather import rules

MAX_TOKENS, MAX_RANKS = 4096, 64
GATHER, SCATTER = rules.BEFORE[0].label, rules.AFTER_BACKWARD[0].label
if (rules.BEFORE, rules.AFTER_BACKWARD) != ((rules.Collective("all-gather", ("k", "v")),),
                                           (rules.Collective("reduce-scatter", ("dk", "dv")),)):
    raise ImportError("model/allgather/run.py moves k, v by one all-gather and dk, dv by one reduce-scatter per "
                      "head group; rules.BEFORE / AFTER_BACKWARD say otherwise")
DEFAULT_HEADS = (4, 2, 1)          # H, Hk, s: GQA two query heads per KV head, two head groups


@dataclass(frozen=True)
class AllGatherRun:
    """`first_difference` None when the run is the target's, else one line naming the packing,
    rank and pair; `broken` the property it breaks; `pairs[r]` rank r's pairs per query head;
    `held[r]` (forward, backward) the elements rank r held at its peak, by array, and `peak[r]`
    their sums, as measured; `received[r]` by collective; `error` out, dq, dk, dv against the
    reference (largest relative)."""

    lengths: tuple
    m: int
    d: int
    first_difference: str | None
    broken: str = ""
    pairs: list = field(default_factory=list)
    held: list = field(default_factory=list)
    peak: list = field(default_factory=list)
    received: list = field(default_factory=list)
    error: dict = field(default_factory=dict)
    heads: tuple = DEFAULT_HEADS

    @property
    def per_rank(self) -> list[int]:
        return list(self.pairs)


class Ledger:
    """The elements one rank holds, array by array, as the model allocates them; `peak` the most
    it held at once and `at_peak` by array then."""

    def __init__(self):
        self.now: dict = {}
        self.peak, self.at_peak = 0, {}

    def hold(self, name: str, array: np.ndarray) -> np.ndarray:
        self.now[name] = self.now.get(name, 0) + int(array.size)
        total = sum(self.now.values())
        if total > self.peak:
            self.peak, self.at_peak = total, dict(self.now)
        return array


def check(t, lengths, m: int, d: int) -> None:
    if not isinstance(m, int) or m < 1 or m > MAX_RANKS:
        raise BadInput(f"-m must be 1..{MAX_RANKS}, got {m}")
    if not isinstance(d, int) or d < 1 or d > 256:
        raise BadInput(f"-d must be 1..256, got {d}")
    t.check(lengths, m)
    if sum(lengths) > MAX_TOKENS:
        raise BadInput(f"{t.name}: {sum(lengths)} tokens; the all-gather model holds at most {MAX_TOKENS}")


def run(t, lengths, m: int, d: int = 2, seed: int = 0, heads=None, numerics: bool = True) -> AllGatherRun:
    """Run target `t` forward and backward at `lengths` on m ranks; `heads` a `rules.heads`
    record (default: H, Hk, s = DEFAULT_HEADS)."""
    lengths = tuple(int(x) for x in lengths)
    check(t, lengths, m, d)
    Hd = heads or rules.heads(*DEFAULT_HEADS)
    key = (Hd.H, Hd.Hk, Hd.s)
    P = t.sizes(lengths, m)
    T, S = P.T, P.S
    label = f"lengths {','.join(map(str, lengths))}, m={m}"

    def differ(what, prop):
        return AllGatherRun(lengths, m, d, f"{label}: {what}", broken=prop, heads=key)

    ranks = [t.rank(P, r) for r in range(m)]
    for R in ranks:                                   # the chunk the collectives move is the rank's
        if (R.lo, R.hi) != rules.chunk(S, R.r):
            return differ(f"rank {R.r} holds [{R.lo}, {R.hi}), the collectives' chunk is {list(rules.chunk(S, R.r))}",
                          "well-formed")
    groups = [(tuple(int(x) for x in rules.group_kv(Hd, g)), tuple(int(x) for x in rules.group_q(Hd, g)))
              for g in range(Hd.G)]
    for g, ((ka, kb), (qa, qb)) in enumerate(groups):
        for h in range(max(qa, 0), min(qb, Hd.H)):
            j = int(rules.kv_head(Hd, h))
            if not ka <= j < kb:
                return differ(f"head group {g}: query head {h} reads KV head {j}, the group gathered KV heads "
                              f"[{ka}, {kb})", "data-flow")
    doc = np.repeat(np.arange(len(lengths)), lengths)
    want = (doc[:, None] == doc[None, :]) & (np.arange(T)[None, :] <= np.arange(T)[:, None])
    count = np.zeros((Hd.H, T, T), dtype=np.int64)
    where = np.full((Hd.H, T, T), -1, dtype=np.int64)   # the rank that computed the pair
    segments = [t.segments(lengths, m, r) for r in range(m)]
    seen_of = []                                        # per rank: (segment, the pairs its kernel computes)
    for R, segs in zip(ranks, segments):
        mine = []
        for seg in segs:
            i, qa, qb, ka, kb = seg
            if not (0 <= ka and kb <= T):
                return differ(f"rank {R.r}'s segment of document {i} reads keys [{ka}, {kb}), outside the "
                              f"gathered buffer [0, {T})", "data-flow")
            if qb <= qa or kb <= ka:
                continue
            qs, ks = np.arange(qa, qb)[:, None], np.arange(ka, kb)[None, :]
            seen = np.broadcast_to(np.asarray(rules.kernel_sees(qa, qb, ka, kb, qs, ks), dtype=bool), (qb - qa, kb - ka))
            qi, ki = np.nonzero(seen)
            qq, kk = qi + qa, ki + ka
            if not (0 <= qa and qb <= T):
                return differ(f"rank {R.r}'s segment of document {i} has queries [{qa}, {qb}), outside the "
                              f"sequence [0, {T})", "placement")
            stray = ~want[qq, kk]
            if stray.any():
                j = int(np.flatnonzero(stray)[0])
                return differ(f"rank {R.r} computes (query {qq[j]}, key {kk[j]}) in its segment of document {i}, "
                              "a pair the document-causal mask does not allow", "coverage")
            for _, (ha, hb) in groups:                  # every head group runs the rank's segments
                hs = np.arange(max(ha, 0), min(hb, Hd.H))[:, None]
                np.add.at(count, (hs, qq[None, :], kk[None, :]), 1)
                where[hs, qq[None, :], kk[None, :]] = R.r
            mine.append((seg, np.array(seen)))
        seen_of.append(mine)
    bad = want[None] & (count != 1)
    if bad.any():
        h, q, k = map(int, np.argwhere(bad)[0])
        alike = bool((count == count[:1]).all())        # the same in every query head: the segments'
        return differ(f"(query {q}, key {k}) is computed {int(count[h, q, k])} times, not once"
                      + ("" if alike else f" (query head {h})"), "coverage")
    home = np.arange(T) // S
    off = want[None] & (where != home[None, :, None])
    if off.any():
        h, q, k = map(int, np.argwhere(off)[0])
        return differ(f"(query {q}, key {k}) is computed on rank {int(where[h, q, k])}, query {q} is rank "
                      f"{int(home[q])}'s", "placement")
    for R, mine in zip(ranks, seen_of):               # a rank runs only queries it holds
        for (i, qa, qb, _, _), _ in mine:
            if qa < R.lo or qb > R.hi:
                return differ(f"rank {R.r}'s segment of document {i} has queries [{qa}, {qb}), rank {R.r} holds "
                              f"[{R.lo}, {R.hi})", "placement")
    pairs = [sum(int(mask.sum()) for _, mask in mine) for mine in seen_of]   # per query head
    held, peak, received, error = _machine(ranks, seen_of, groups, Hd, want, T, S, d, seed, numerics)
    return AllGatherRun(lengths, m, d, None, "", pairs, held, peak, received, error, key)


def _machine(ranks, seen_of, groups, Hd, want, T, S, d, seed, numerics):
    """The collectives and the compute, rank by rank and head group by head group, on each rank's
    own arrays (its ledger measures what it holds); the numerics against the dense reference."""
    m, H, Hk, s = len(ranks), Hd.H, Hd.Hk, Hd.s
    rng = np.random.default_rng(seed)
    q, dout = rng.standard_normal((T, H, d)), rng.standard_normal((T, H, d))
    k, v = rng.standard_normal((T, Hk, d)), rng.standard_normal((T, Hk, d))
    scale = 1.0 / np.sqrt(d)
    fwd, bwd = [Ledger() for _ in ranks], [Ledger() for _ in ranks]
    got = {GATHER: [0] * m, SCATTER: [0] * m}
    local = [{name: x[R.lo:R.hi].copy() for name, x in (("q", q), ("k", k), ("v", v), ("dout", dout))} for R in ranks]

    def gather(r, buffer, ka, kb, counted=True):
        """The all-gather of KV heads [ka, kb) into rank r's buffer: row t of chunk r2 from rank r2
        (`counted`: in `received`, which counts one call's, the forward's)."""
        for r2, R2 in enumerate(ranks):
            lo, hi = rules.chunk(S, r2)
            if numerics:                                # the rows only the compute reads
                buffer[0, lo:hi] = local[r2]["k"][:, ka:kb]
                buffer[1, lo:hi] = local[r2]["v"][:, ka:kb]
            if r2 != r and counted:
                got[GATHER][r] += 2 * (hi - lo) * (kb - ka) * d

    def heads_of(group):
        """The group's query heads and, for each, its KV head's index in the gathered buffer."""
        (ka, _), (ha, hb) = group
        hs = np.arange(ha, hb)
        return hs, np.array([int(rules.kv_head(Hd, int(h))) - ka for h in hs], dtype=np.int64)

    # forward: each rank's inputs, two gathered buffers, its out and lse group by group
    outs, lses = [], []
    for r, R in enumerate(ranks):
        led = fwd[r]
        for name in ("q", "k", "v"):
            led.hold(name, local[r][name])
        bufs = [led.hold("kv buffer", np.zeros((2, T, s, d))), led.hold("kv buffer (next group)", np.zeros((2, T, s, d)))]
        out, lse = np.zeros((S, H, d)), np.zeros((S, H))
        for g, group in enumerate(groups):
            (ka, kb), (ha, hb) = group
            buf = bufs[g % 2]
            gather(r, buf, ka, kb)
            led.hold("out", out[:, ha:hb])
            led.hold("lse", lse[:, ha:hb])
            if not numerics:
                continue
            hs, js = heads_of(group)
            for (_, qa, qb, kl, kh), seen in seen_of[r]:
                rows = slice(qa - R.lo, qb - R.lo)
                w = np.einsum("qhd,khd->hqk", local[r]["q"][rows][:, hs], buf[0, kl:kh][:, js]) * scale
                w = np.where(seen[None], w, -np.inf)
                top = w.max(axis=2)
                e = np.exp(w - top[:, :, None])
                total = e.sum(axis=2)
                out[rows, hs] = np.einsum("hqk,khd->qhd", e / total[:, :, None], buf[1, kl:kh][:, js])
                lse[rows, hs] = (top + np.log(total)).T
        outs.append(out)
        lses.append(lse)
    # backward: the same gathers; per group a T-row dK, dV buffer, reduce-scattered onto the home ranks
    dqs, dks, dvs, dkv_bufs, bufs_of = [], [], [], [], []
    for r, R in enumerate(ranks):
        led = bwd[r]
        for name in ("q", "k", "v", "dout"):
            led.hold(name, local[r][name])
        led.hold("out", outs[r])
        led.hold("lse", lses[r])
        bufs_of.append([led.hold("kv buffer", np.zeros((2, T, s, d))),
                        led.hold("kv buffer (next group)", np.zeros((2, T, s, d)))])
        dkv_bufs.append(led.hold("dkv buffer", np.zeros((2, T, s, d))))
        dqs.append(led.hold("dq", np.zeros((S, H, d))))
        dks.append(led.hold("dk", np.zeros((S, Hk, d))))
        dvs.append(led.hold("dv", np.zeros((S, Hk, d))))
    for g, group in enumerate(groups):
        (ka, kb), _ = group
        for r, R in enumerate(ranks):
            buf, dkv = bufs_of[r][g % 2], dkv_bufs[r]
            gather(r, buf, ka, kb, counted=False)
            dkv[:] = 0
            if not numerics:
                continue
            delta = (local[r]["dout"] * outs[r]).sum(axis=2)
            hs, js = heads_of(group)
            for (_, qa, qb, kl, kh), seen in seen_of[r]:
                rows, keys = slice(qa - R.lo, qb - R.lo), np.arange(kl, kh)
                qh, doh = local[r]["q"][rows][:, hs], local[r]["dout"][rows][:, hs]
                kh_, vh = buf[0, kl:kh][:, js], buf[1, kl:kh][:, js]
                w = np.einsum("qhd,khd->hqk", qh, kh_) * scale
                p = np.where(seen[None], np.exp(w - lses[r][rows][:, hs].T[:, :, None]), 0.0)
                ds = p * (np.einsum("qhd,khd->hqk", doh, vh) - delta[rows][:, hs].T[:, :, None])
                dqs[r][rows, hs] += np.einsum("hqk,khd->qhd", ds, kh_) * scale
                np.add.at(dkv[0], (keys[:, None], js[None, :]), np.einsum("hqk,qhd->khd", ds, qh) * scale)
                np.add.at(dkv[1], (keys[:, None], js[None, :]), np.einsum("hqk,qhd->khd", p, doh))
        for r, R in enumerate(ranks):                   # the reduce-scatter: rank r keeps chunk r
            lo, hi = rules.chunk(S, r)
            dks[r][:, ka:kb] = sum(dkv_bufs[r2][0, lo:hi] for r2 in range(m))
            dvs[r][:, ka:kb] = sum(dkv_bufs[r2][1, lo:hi] for r2 in range(m))
            got[SCATTER][r] += 2 * (m - 1) * (hi - lo) * (kb - ka) * d
    held = [(f.at_peak, b.at_peak) for f, b in zip(fwd, bwd)]
    peak = [(f.peak, b.peak) for f, b in zip(fwd, bwd)]
    received = [{name: got[name][r] for name in got} for r in range(m)]
    error = {}
    if numerics:
        mine = {"out": np.concatenate(outs), "dq": np.concatenate(dqs), "dk": np.concatenate(dks), "dv": np.concatenate(dvs)}
        refs = _reference(q, k, v, dout, want, Hd, scale)
        error = {n: _relative(mine[n], refs[n]) for n in refs}
    return held, peak, received, error


def _relative(got, ref) -> float:
    """Largest error relative to the reference's largest entry; inf where the run made a NaN or inf."""
    if not np.isfinite(got).all():
        return float("inf")
    return float(np.abs(got - ref).max() / max(1.0, np.abs(ref).max()))


def _reference(q, k, v, dout, want, Hd, scale) -> dict:
    """Dense per-document causal attention and its gradients, query head h on KV head h // (H/Hk)."""
    out, dq = np.zeros_like(q), np.zeros_like(q)
    dk, dv = np.zeros_like(k), np.zeros_like(v)
    for h in range(Hd.H):
        j = h // Hd.R
        w = np.where(want, q[:, h] @ k[:, j].T * scale, -np.inf)
        p = np.exp(w - w.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        dp = dout[:, h] @ v[:, j].T
        ds = p * (dp - (p * dp).sum(axis=1, keepdims=True))
        out[:, h], dq[:, h] = p @ v[:, j], ds @ k[:, j] * scale
        dk[:, j] += ds.T @ q[:, h] * scale
        dv[:, j] += p.T @ dout[:, h]
    return {"out": out, "dq": dq, "dk": dk, "dv": dv}
