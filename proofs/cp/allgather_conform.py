"""All-gather context parallelism run against the all-gather machine (`prove conform llama3-varlen`).

ring-flash-attn's `llama3_flash_attn_varlen_func` (Llama 3's context parallelism) runs on the
gloo ranks of `conform`, its flash-attn varlen kernels the recording stand-ins of `kernels`. Rank r
holds the contiguous tokens [rS, (r + 1)S) and is given the global cu_seqlens; the library's
`llama3_flash_attn_prepare_cu_seqlens` cuts them into the rank's `cu_seqlens_q`, `cu_seqlens_k`
and `local_k_slice`, and the function all-gathers K and V one group of `heads_k_stride` heads at
a time, runs the rank's segments, and in the backward reduce-scatters dK and dV per group.

A run conforms when, at every (m, lengths vector):
  - the (rank, query, key) pairs of the forward's kernel calls, and of the backward's, are in
    every head exactly `AllGather.expected_pairs` (schedules/allgather.py), each once, the query
    rows and key rows of a call of the same heads;
  - its collectives are the machine's (model/allgather/rules.py): per head group and pass one
    all-gather of K and one of V over all m ranks (S rows in, T out, the gathered row t token t),
    completed before the group's first kernel call; in the backward one reduce-scatter of the
    buffer the kernel wrote dK into and one of dV's (T rows in, S out) after the group's last call;
    no other collective, nothing point-to-point;
  - out and dq of each rank's tokens, and the reduce-scattered dk and dv of its tokens, equal SDPA
    and autograd per document (placement: each on its home rank), within `conform.TOLERANCE` (out and
    dq, one kernel's rounding) or m times it (dk and dv, the sum of m rounded partials).
"""

from __future__ import annotations

import random
import sys
from collections import Counter

from ringproof.errors import BadInput
from ringproof.model.allgather import rules
from ringproof.proofs.cp.conform import MAX_TOKENS, TOLERANCE, Conformance, Packed, draw_inputs, run_world
from ringproof.schedules.allgather import AllGather
from ringproof.schedules.documents import cu_seqlens

LIBRARY = "llama3_flash_attn_varlen_func and llama3_flash_attn_prepare_cu_seqlens"


class Llama3:
    """ring-flash-attn's entry, as its own tests call it: `fn(q, k, v, cu_seqlens, causal=...)` on
    a rank's (S, h, d) rows and the global int32 prefix sums. The prepare function is looked up on
    the library's module at every call, so that a test may replace it."""

    def __init__(self, varlen_func, heads_k_stride: int):
        self.module = sys.modules[varlen_func.__module__]
        self.func, self.stride = varlen_func, heads_k_stride

    def __call__(self, q, k, v, cu_seqlens, causal=True):
        import torch.distributed as dist

        prepare = self.module.llama3_flash_attn_prepare_cu_seqlens
        cu_q, cu_k, max_q, max_k, local_k_slice = prepare(cu_seqlens, causal, dist.get_rank(), dist.get_world_size())
        return self.func(q, k, v, cu_q, cu_k, max_q, max_k, self.stride, local_k_slice, causal=causal)


def plan(t: AllGather, world_sizes, lengths=(), vectors: int = 0, seed: int = 0, max_tokens: int = MAX_TOKENS):
    """[(m, [lengths vector, ...])] and the skipped [(lengths, m)], as `conform.varlen_plan` makes
    them for a ring row: every given vector at each world size where m | T, then `vectors` random
    ones per world size (1 to 4 documents of 1 to 2m tokens, the last lengthened to make m | T, so
    documents cross ranks). BadInput (one line) for a vector that meets m | T at no world size or
    has over `max_tokens` tokens: outside it the library is never run."""
    plan_, skipped = [], []
    for given in lengths:
        text = ",".join(map(str, given))
        if sum(given) > max_tokens:
            raise BadInput(f"--lengths {text}: {sum(given)} tokens, at most {max_tokens} here")
        if t.single and len(given) != 1:
            raise BadInput(f"--lengths {text}: {t.name} is one sequence; give -n T (llama3-varlen takes documents)")
        if not any(t.valid(given, m) for m in world_sizes):
            m = min(world_sizes)
            raise BadInput(f"--lengths {text}: {t.name} needs {t.requires_text} (llama3_flash_attn_prepare_cu_seqlens "
                           f"asserts it), and T = {sum(given)} is not a multiple of {m} at world size {m}"
                           + (" (nor at any world size asked for)" if len(world_sizes) > 1 else ""))
    for m in world_sizes:
        run = [tuple(given) for given in lengths if t.valid(given, m)]
        skipped += [(tuple(given), m) for given in lengths if not t.valid(given, m)]
        rng = random.Random(seed * 1_000_003 + m)
        drawn, tries = [], 0
        while len(drawn) < vectors and tries < 100 * vectors:
            tries += 1
            vector = [rng.randint(1, 2 * m) for _ in range(1 if t.single else rng.choice((1, 2, 2, 3, 3, 4)))]
            vector[-1] += -sum(vector) % m
            vector = tuple(vector)
            if vector not in run and vector not in drawn and sum(vector) <= max_tokens:
                drawn.append(vector)
        plan_.append((m, run + drawn))
    return plan_, skipped


def conform_allgather(t: AllGather, fn, impl: str, plan_, setup, check_inputs: bool = True) -> Conformance:
    """Run `fn` at every (m, lengths vectors) of `plan_` (each meeting m | T); stop at the first
    world size with a difference. The inputs are drawn here first (BadInput when -d is too small
    to name every head's rows)."""
    if setup.dtype not in TOLERANCE:
        raise BadInput(f"dtype {setup.dtype!r}: expected one of {', '.join(TOLERANCE)}")
    result = Conformance(t.name, impl)
    for m, vectors in plan_:
        bad = [lengths for lengths in vectors if not t.valid(lengths, m)]
        if bad:
            raise BadInput(f"{t.name} at world size {m}: lengths {','.join(map(str, bad[0]))} cannot be run "
                           f"(it needs {t.requires_text})")
        cases = [_Gathered(t, tuple(lengths), m, setup.heads) for lengths in vectors]
        if check_inputs:
            import torch

            for case in cases:
                draw_inputs(torch, case.n, setup.heads, setup.d, setup.seed, getattr(torch, setup.dtype), case.width)
        if cases and not run_world(result, m, cases, fn, setup):
            break
    return result


def _heads(h) -> str:
    if not h:
        return "no head (rows that are no token's)"
    a, b = h
    return f"head {a}" if b == a + 1 else f"heads {a}..{b - 1}"


class _Gathered(Packed):
    """One packed run on the all-gather machine: rank r the tokens [rS, (r + 1)S) of the documents
    of `lengths`; the implementation takes its rows and the global cu_seqlens."""

    width = 1           # every head's rows distinct: a call on any group of heads is named by its rows

    def __init__(self, t: AllGather, lengths: tuple, m: int, heads: int):
        import numpy as np

        self.v, self.lengths, self.m, self.key, self.heads = t, lengths, m, lengths, heads
        self.n = sum(lengths)
        self.S = self.n // m
        self.positions = np.arange(self.n)
        self.doc = np.repeat(np.arange(len(lengths)), lengths)

    def call(self, fn, local, rank):
        import torch

        cu = torch.tensor(cu_seqlens(self.lengths), dtype=torch.int32)
        out = fn(*(x[0] for x in local), cu, causal=self.v.causal)
        return out.unsqueeze(0) if isinstance(out, torch.Tensor) and out.dim() == 3 else out

    def allowed(self, name, tolerance) -> float:
        """out and dq are written once per query by one kernel call (one rounding); dk and dv are the
        reduce-scatter's sums of m partials, each rounded to the dtype (m roundings)."""
        return tolerance * self.m if name in ("dk", "dv") else tolerance

    def expected(self) -> set:
        """(rank, query, key) of the all-gather machine, in each head."""
        return self.v.expected_pairs(self.lengths, self.m)

    def excluded(self, qt, kt) -> str | None:
        if self.doc[qt] != self.doc[kt]:
            return (f"it crosses documents (query in document {self.doc[qt] + 1}, key in document "
                    f"{self.doc[kt] + 1})")
        return None if kt <= qt else "the mask excludes it (key after query)"

    def compare(self, kind, calls):
        """The first pair, in head order, computed in another head's rows, on another rank than
        the machine's, twice, never, or one the mask excludes; None when there is none."""
        if not hasattr(self, "_expected"):
            self._expected = self.expected()
        done = Counter()
        for c in calls:
            if -1 in c.queries or -1 in c.keys:
                which = "query" if -1 in c.queries else "key"
                return self.difference(kind, f"{kind}: rank {c.rank} passes the kernel {which} rows that are no "
                                       "token's: the implementation changed them", rank=c.rank)
            if c.heads != c.key_heads or not c.heads:
                return self.difference(kind, f"{kind}: rank {c.rank} runs the queries of {_heads(c.heads)} against "
                                       f"the keys of {_heads(c.key_heads)}", rank=c.rank)
            for h in range(*c.heads):
                for qt, kt in c.pairs():
                    done[(h, c.rank, qt, kt)] += 1
        wrong = [(key, "extra") for key in done if key[1:] not in self._expected] + \
                [(key, "twice") for key, count in done.items() if count > 1 and key[1:] in self._expected] + \
                [((h, *key), "missing") for h in range(self.heads) for key in self._expected if (h, *key) not in done]
        if not wrong:
            return None
        (h, rank, qt, kt), how = min(wrong)
        if how == "missing":
            msg = f"rank {rank} never computes (query {qt}, key {kt}) in head {h}, as the all-gather machine does"
        elif how == "twice":
            msg = f"rank {rank} computes (query {qt}, key {kt}) {done[(h, rank, qt, kt)]} times in head {h}"
        elif self.excluded(qt, kt) is not None:
            msg = f"rank {rank} computes (query {qt}, key {kt}) in head {h}: {self.excluded(qt, kt)}"
        else:
            msg = (f"rank {rank} computes (query {qt}, key {kt}) in head {h}; the all-gather machine computes it "
                   f"on rank {qt // self.S}, the query's")
        return self.difference(kind, f"{kind}: {msg}", rank=rank, tokens=(qt, kt))

    def communication(self, reports):
        """The first way a rank's communication departs from the machine's collectives, or None."""
        for rep in reports:
            diff = self._collectives(rep)
            if diff is not None:
                return self.difference("collectives", diff, rank=rep["rank"])
        return None

    def _collectives(self, rep) -> str | None:
        r, m, S, T = rep["rank"], self.m, self.S, self.n
        if rep["peers"]:
            what, peer = rep["peers"][0]
            return (f"rank {r} {what}s {'to' if what == 'send' else 'from'} rank {peer} point to point: the "
                    "all-gather machine moves K, V by all-gather and dK, dV by reduce-scatter only")
        calls, done = rep["calls"], rep["collectives"]
        for c in done:
            where = f"rank {r} in the {c.phase} pass"
            if c.kind not in ("all-gather", "reduce-scatter") or (c.kind == "reduce-scatter" and c.phase == "forward"):
                return (f"{where} makes a{'n' if c.kind[0] in 'aeiou' else ''} {c.kind}: the all-gather machine's "
                        "collectives are the all-gathers of K and V and, after the backward, the reduce-scatters of dK "
                        "and dV")
            if c.group != m:
                return (f"{where} makes a{'n' if c.kind[0] in 'aeiou' else ''} {c.kind} over {c.group} "
                        f"rank{'s' if c.group != 1 else ''}, not all {m}")
            if not c.array:
                return (f"{where} all-gathers rows that are no token's K or V" if c.kind == "all-gather" else
                        f"{where} reduce-scatters a buffer no backward kernel call wrote dK or dV into")
            rows = (S, T) if c.kind == "all-gather" else (T, S)
            if (c.rows_in, c.rows_out) != rows:
                return (f"{where} {c.kind}s {c.array} of {_heads(c.heads)} from {c.rows_in} rows into {c.rows_out}, "
                        f"not {rows[0]} into {rows[1]} (S = {S}, T = {T})")
            if c.kind == "all-gather" and c.done is not None and tuple(c.gathered) != tuple(range(T)):
                t = next((i for i, x in enumerate(c.gathered) if x != i), len(c.gathered))
                lo, hi = rules.chunk(S, t // S) if t < T else (T, T)
                return (f"{where}: row {t} of its gathered {c.array.upper()} of {_heads(c.heads)} is token "
                        f"{c.gathered[t] if t < len(c.gathered) else 'none'}, not {t} (rank {t // S}'s chunk [{lo}, {hi}))")
        for phase in ("forward", "backward"):
            order = [i for i, c in enumerate(calls) if c.kind == phase]
            groups = sorted({calls[i].heads for i in order})
            for heads in groups:
                first = min(i for i in order if calls[i].heads == heads)
                last = max(i for i in order if calls[i].heads == heads)
                for array in ("k", "v"):
                    found = [c for c in done if c.kind == "all-gather" and c.phase == phase and c.array == array
                             and c.heads == heads]
                    if len(found) != 1:
                        return (f"rank {r} all-gathers {array.upper()} of {_heads(heads)} {len(found)} times in the "
                                f"{phase} pass, not once")
                    if found[0].done is None or found[0].done > first:
                        return (f"rank {r} runs {_heads(heads)} in the {phase} pass before its all-gather of "
                                f"{array.upper()} completes")
                if phase == "backward":
                    for array in ("dk", "dv"):
                        found = [c for c in done if c.kind == "reduce-scatter" and c.array == array and c.heads == heads]
                        if len(found) != 1:
                            return (f"rank {r} reduce-scatters {array} of {_heads(heads)} {len(found)} times, not once")
                        if found[0].issued <= last:
                            return (f"rank {r} reduce-scatters {array} of {_heads(heads)} before its last backward "
                                    "kernel call of those heads")
            extra = [c for c in done if c.phase == phase and c.heads not in groups]
            if extra:
                c = extra[0]
                return f"rank {r} {c.kind}s {c.array} of {_heads(c.heads)} in the {phase} pass, heads no kernel call runs"
        return None

    def summary(self, reports) -> str:
        rep = reports[0]
        count = Counter((c.kind, c.phase) for c in rep["collectives"])
        groups = len({c.heads for c in rep["calls"]})
        return (f"collectives the machine's: {count[('all-gather', 'forward')]} all-gathers forward and "
                f"{count[('all-gather', 'backward')]} backward (K and V of {groups} head group{'s' if groups > 1 else ''}, "
                f"{self.S} row{'s' if self.S > 1 else ''} from each of {self.m} ranks), {count[('reduce-scatter', 'backward')]} reduce-scatters "
                "of dK, dV after the backward's calls; nothing point to point")
