"""Run a real context-parallel implementation and hold it against a target's schedule.

For each world size m, m CPU processes join a torch.distributed gloo process group on loopback;
the flash-attn kernels the implementation calls are the recording stand-ins of `kernels`. Each
rank takes its tokens of global q, k, v (the target's layout), runs the implementation's forward
and backward, and reports its kernel calls, its peers and its outputs and gradients against
`scaled_dot_product_attention` and autograd on the whole sequence (float64).

The implementation conforms when, at every (m, n):
  - every kernel call's (rank, ring step, query, key) pairs, forward and backward, are exactly the
    registered schedule's (read from its steps on ints: rank r at step s computes the pairs of its
    queries with the K/V block of rank (r − s) mod m that the mask allows), each pair once;
  - every rank sends only to the next rank and receives only from the previous one;
  - outputs and gradients equal the reference within `TOLERANCE` (relative to the largest value,
    or to `errors.FLOOR` where that is smaller;
    a gradient, summed over the m ring steps with each partial rounded once, within m times it).

Packed sequences (`conform_varlen`, a `documents.Varlen` row): the same at every (m, lengths
vector), the implementation's varlen function taking each rank's tokens of every document and the
local prefix sums cu_seqlens // m; the expected pairs are the row's (rank r at step s: its
positions' queries with rank (r − s) mod m's keys where the row `computes` the pair), and the
reference is SDPA and autograd per document.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import multiprocessing
import os
import queue as queues
import sys
import tempfile
import time
import types
from collections import Counter
from dataclasses import dataclass, field

from ringproof.errors import BadInput, InternalError
from ringproof.proofs import threads
from ringproof.proofs.cp import kernels
from ringproof.proofs.cp.errors import FLOOR, error_scale
from ringproof.proofs.cp.load import load_callable
from ringproof.schedules.context_parallel import RING_PASSES, ContextParallel
from ringproof.schedules.documents import Varlen, cu_seqlens
from ringproof.schedules.dsl import params

# The largest |difference| from the float64 reference, relative to the quantity's largest |value|,
# allowed per input dtype. flash-attn takes float16 and bfloat16 only; a ring library sums each
# kernel's results (rounded to the input dtype) in float32 and rounds the sum once more: two units
# in the last place of 1.0 (float16 2^-10, bfloat16 2^-7; why these bound it: docs/context-parallel.md).
TOLERANCE = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 1e-5, "float64": 1e-5}

# ring-flash-attn's function for each target: (module inside the package, function)
RING_FLASH_ATTN = {
    "ring-attention": ("ring_flash_attn", "ring_flash_attn_func"),
    "ring-attention-causal": ("ring_flash_attn", "ring_flash_attn_func"),
    "striped": ("stripe_flash_attn", "stripe_flash_attn_func"),
    "zigzag": ("zigzag_ring_flash_attn", "zigzag_ring_flash_attn_func"),
    "ring-attention-varlen": ("ring_flash_attn_varlen", "ring_flash_attn_varlen_func"),
    "zigzag-varlen": ("zigzag_ring_flash_attn_varlen", "zigzag_ring_flash_attn_varlen_func"),
    "llama3": ("llama3_flash_attn_varlen", "llama3_flash_attn_varlen_func"),
    "llama3-varlen": ("llama3_flash_attn_varlen", "llama3_flash_attn_varlen_func"),
}

# What ring-flash-attn lacks, said in one line (exit 64) instead of a run.
RING_FLASH_ATTN_LACKS = {
    "zigzag-varlen-padded": "ring-flash-attn has no padded varlen path (its varlen functions take one "
                            "cu_seqlens, no cu_seqlens_padded): zigzag-varlen-padded cannot be run against it",
}

# The most tokens (T = Σ L_i) of a packed run: the expected pairs are read pair by pair from the row.
MAX_TOKENS = 512


@dataclass(frozen=True)
class Difference:
    """The first way the implementation departs from the schedule or the reference."""

    m: int
    n: int
    what: str            # 'error', 'forward', 'backward', 'ring', 'numerics'
    message: str
    rank: int | None = None
    step: int | None = None
    tokens: tuple = ()
    lengths: tuple | None = None      # the lengths vector of a packed run (n is then its T)

    def __str__(self):
        where = f"lengths {','.join(map(str, self.lengths))}" if self.lengths else f"n={self.n}"
        return f"world size {self.m}, {where}: {self.message}"


@dataclass
class Conformance:
    target: str
    impl: str
    runs: list = field(default_factory=list)          # (m, n or lengths, kernel calls, max error, seconds)
    difference: Difference | None = None
    unknown: str | None = None
    notes: dict = field(default_factory=dict)          # (m, n or lengths) → what its communication was

    @property
    def ok(self) -> bool:
        return self.difference is None and self.unknown is None


def load_implementation(impl: str, cp: ContextParallel):
    """The implementation's function for `cp`, imported with the stand-ins in place of flash-attn.
    BadInput (exit 64) when it cannot be loaded."""
    saved = {name: sys.modules.get(name) for name in ("flash_attn", "flash_attn.flash_attn_interface")}
    fake = kernels.flash_attn_module()
    sys.modules["flash_attn"], sys.modules["flash_attn.flash_attn_interface"] = fake, fake.flash_attn_interface
    try:
        if impl == "ring-flash-attn":
            return _ring_flash_attn(cp)
        if ":" not in impl:
            raise BadInput(f"--impl {impl[:80]!r}: expected ring-flash-attn or MODULE:FUNCTION")
        return load_callable(impl, "--impl")
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _ring_flash_attn(cp: ContextParallel | Varlen):
    """ring-flash-attn's function, its modules loaded under a private package name: the package's
    own __init__ imports transformers and the varlen kernels, which CPU-only machines lack, and a
    copy imported earlier with the real kernels is left alone."""
    name = cp.name.removesuffix("-bwd")          # a varlen row's -bwd twin runs the same functions
    if name in RING_FLASH_ATTN_LACKS:
        raise BadInput(RING_FLASH_ATTN_LACKS[name])
    if name not in RING_FLASH_ATTN:
        raise BadInput(f"ring-flash-attn has no schedule for {cp.name}")
    try:
        spec = importlib.util.find_spec("ring_flash_attn")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise BadInput("ring-flash-attn is not installed (pip install --no-deps ring-flash-attn, or "
                       "pip install -e '.[cp]')")
    try:
        import torch  # noqa: F401  (the library needs it; say so before its import fails)
    except ImportError:
        raise BadInput("ring-flash-attn needs PyTorch (pip install -e '.[cp]')") from None
    package = "ringproof_cp_ring_flash_attn"
    if package not in sys.modules:
        stub = types.ModuleType(package)
        stub.__path__ = list(spec.submodule_search_locations)
        sys.modules[package] = stub
    module_name, fn_name = RING_FLASH_ATTN[name]
    try:
        module = importlib.import_module(f"{package}.{module_name}")
    except Exception as err:
        raise BadInput(f"cannot load ring-flash-attn's {module_name}: {type(err).__name__}: {err}") from None
    return getattr(module, fn_name)


@dataclass(frozen=True)
class Setup:
    """The data of a run: heads and head dimension of q, k, v (batch 1), the seed, the dtype of
    the inputs, and the seconds a world size may take."""

    heads: int = 2
    d: int = 8
    seed: int = 0
    dtype: str = "float16"
    timeout: float = 120.0


def conform(cp: ContextParallel, fn, impl: str, world_sizes, ns, setup: Setup = Setup()) -> Conformance:
    """Run `fn` at every world size and every n of `ns` that `cp` allows there (`ns` None: the
    least n `cp` allows and 16·m); stop at the first world size with a difference."""
    if setup.dtype not in TOLERANCE:
        raise BadInput(f"dtype {setup.dtype!r}: expected one of {', '.join(TOLERANCE)}")
    result = Conformance(cp.name, impl)
    for m in world_sizes:
        sizes = sorted({cp.unit(m), 16 * m}) if ns is None else [n for n in ns if cp.valid(n, m)]
        if sizes and not run_world(result, m, [_Single(cp, n, m) for n in sizes], fn, setup):
            break
    return result


def conform_varlen(v: Varlen, fn, impl: str, plan, setup: Setup = Setup()) -> Conformance:
    """Run the varlen function `fn` at every (m, lengths vectors) of `plan`, each vector meeting
    the row's side condition at m (`varlen_plan`); stop at the first world size with a difference."""
    if setup.dtype not in TOLERANCE:
        raise BadInput(f"dtype {setup.dtype!r}: expected one of {', '.join(TOLERANCE)}")
    result = Conformance(v.name, impl)
    for m, vectors in plan:
        bad = [lengths for lengths in vectors if not v.valid(lengths, m) or v.padded]
        if bad:
            raise BadInput(f"{v.name} at world size {m}: lengths {','.join(map(str, bad[0]))} cannot be run "
                           f"(it needs {v.requires_text})")
        if vectors and not run_world(result, m, [Packed(v, tuple(lengths), m) for lengths in vectors], fn, setup):
            break
    return result


def run_world(result, m, cases, fn, setup) -> bool:
    """Run `cases` on one process group of m ranks and judge each into `result`; False once there
    is a difference or no answer. Every machine's conform check runs its world through it
    (`allgather_conform` too), so ranks, timeouts and judging are one code."""
    start = time.monotonic()
    reports, failure = _run_ring(cases, fn, m, setup)
    seconds = time.monotonic() - start
    if failure == "timeout":
        result.unknown = (f"world size {m}: no answer from every rank within {setup.timeout:g} s "
                          "(a rank waits for a message that never comes?)")
        return False
    keys = [case.key for case in cases]
    for case in cases:
        diff, calls, error = _judge(case, [reports.get((r, case.key)) for r in range(m)], failure,
                                    TOLERANCE[setup.dtype], keys)
        if diff is not None:
            result.difference = diff
            return False
        result.runs.append((m, case.key, calls, error, seconds / len(cases)))
        result.notes[(m, case.key)] = case.summary([reports.get((r, case.key)) for r in range(m)])
    return True


def varlen_plan(v: Varlen, world_sizes, lengths=(), vectors: int = 0, seed: int = 0, max_tokens: int = MAX_TOKENS):
    """[(m, [lengths vector, ...])] and the skipped [(lengths, m)]: every given vector at each world
    size where it meets the side condition, then `vectors` random ones per world size that meet it
    (1 to 4 documents, mostly 2 or 3, each 1 to 3 units long, drawn from `seed`). BadInput (one line, naming the
    side condition and the first document that breaks it) for a vector that meets it at no world
    size, or one over `max_tokens` tokens: outside the condition the implementation is never run."""
    import random

    if v.padded:
        raise BadInput(f"{v.name}: no conform check of a padded varlen schedule (its implementations take "
                       "cu_seqlens_padded beside cu_seqlens)")
    plan, skipped = [], []
    for given in lengths:
        if sum(given) > max_tokens:
            raise BadInput(f"--lengths {','.join(map(str, given))}: {sum(given)} tokens, at most {max_tokens} here")
        if not any(v.valid(given, m) for m in world_sizes):
            m = min(world_sizes)
            i = next(i for i, length in enumerate(given) if length % v.unit(m))
            raise BadInput(f"--lengths {','.join(map(str, given))}: {v.name} needs {v.requires_text} "
                           f"(the library checks none of it), and document {i + 1} has length {given[i]}, not a "
                           f"multiple of {v.unit(m)} at world size {m}"
                           + (" (nor at any world size asked for)" if len(world_sizes) > 1 else ""))
    for m in world_sizes:
        run = [tuple(given) for given in lengths if v.valid(given, m)]
        skipped += [(tuple(given), m) for given in lengths if not v.valid(given, m)]
        rng = random.Random(seed * 1_000_003 + m)
        unit, drawn, tries = v.unit(m), [], 0
        while len(drawn) < vectors and tries < 100 * vectors:
            tries += 1
            vector = tuple(unit * rng.randint(1, 3) for _ in range(rng.choice((1, 2, 2, 3, 3, 4))))
            if vector not in run and vector not in drawn and sum(vector) <= max_tokens:
                drawn.append(vector)
        plan.append((m, run + drawn))
    return plan, skipped


def _run_ring(cases, fn, m, setup):
    """Fork m ranks; collect each rank's report per case. Returns ({(rank, case key): report},
    failure): failure None, 'timeout', or the first report with an error (a rank that ended
    without a report gets one naming its exit code)."""
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    sizes = [case.key for case in cases]
    with tempfile.TemporaryDirectory(prefix="ringproof-cp-") as tmp:
        store = os.path.join(tmp, "store")
        procs = [ctx.Process(target=_rank_main, args=(r, m, cases, store, fn, setup, results),
                             daemon=True) for r in range(m)]
        with threads.paused():           # no thread of ours alive while the ranks fork
            for p in procs:
                p.start()
        reports, failure, deadline = {}, None, time.monotonic() + setup.timeout
        try:
            while not all(all((r, n) in reports for n in sizes)
                          or any(reports.get((r, n), {}).get("error") for n in sizes) for r in range(m)):
                if time.monotonic() > deadline:
                    failure = failure or "timeout"
                    break
                try:
                    rep = results.get(timeout=0.2)
                except queues.Empty:
                    for rank, p in enumerate(procs):
                        missing = [n for n in sizes if (rank, n) not in reports]
                        if p.is_alive() or not missing or any(
                                reports.get((rank, n), {}).get("error") for n in sizes):
                            continue
                        rep = _died(rank, missing[0], p)
                        reports[(rank, missing[0])] = rep
                        failure = failure or rep
                        deadline = min(deadline, time.monotonic() + 5.0)
                    if all(not p.is_alive() for p in procs) and results.empty():
                        break
                    continue
                if "internal" in rep:
                    died = _dead_peer(procs, rep["rank"], reports, sizes)
                    if died is None:
                        raise InternalError(f"rank {rep['rank']} of the run at world size {m}: {rep['internal']}")
                    # a peer that died breaks the process group under this rank: the death is the finding
                    reports[(died["rank"], died["n"])] = died
                    failure = failure or died
                    break
                reports[(rep["rank"], rep["n"])] = rep
                if rep["error"] is not None and failure is None:
                    failure = rep
                    # the other ranks may wait forever for the one that failed: a short grace
                    deadline = min(deadline, time.monotonic() + 5.0)
        finally:
            for p in procs:
                p.join(timeout=1.0)
                if p.is_alive():
                    p.terminate()
                    p.join(timeout=2.0)
    return reports, failure


def _dead_peer(procs, rank, reports, sizes, wait=3.0):
    """The report of another rank that ended without one (its exit code), waiting up to `wait`
    seconds for it to end; None if every other rank is alive or reported."""
    until = time.monotonic() + wait
    while True:
        for other, p in enumerate(procs):
            missing = [n for n in sizes if (other, n) not in reports]
            if other != rank and missing and not p.is_alive() and p.exitcode != 0:
                return _died(other, missing[0], p)
        if time.monotonic() > until:
            return None
        time.sleep(0.05)


def _died(rank, n, p):
    """The report of a rank whose process `p` ended before reporting size n."""
    return {"rank": rank, "n": n, "error": f"ended without a report (exit code {p.exitcode}"
            f"{_signal(p.exitcode)})", "peers": [], "died": True}


def _signal(code):
    import signal

    if code is not None and code < 0:
        try:
            return f": {signal.Signals(-code).name}"
        except ValueError:
            return ""
    return ""


def draw_inputs(torch, n, heads, d, seed, dtype, width=None):
    """Global q, k, v, dO of shape (1, n, heads, d); every q row and every k row distinct. With
    `width` (a library that runs its heads in groups of that many), every slice of `width` heads of
    a q, k or v row distinct too, over all tokens and head offsets: BadInput when the draws keep
    repeating one (too small a -d for the dtype). Each rank draws them; `allgather_conform` draws
    them first in the parent, so that too small a -d is bad input before any rank starts."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + n)
    for _ in range(200):
        q, k, v, do = ((torch.rand(1, n, heads, d, generator=g, dtype=torch.float64) * 2 - 1).to(dtype)
                       for _ in range(4))
        if all(len({kernels.row_bytes(x, t) for t in range(n)}) == n for x in (q, k)) \
                and (width is None or all(_distinct_slices(x, width) for x in (q, k, v))):
            return q, k, v, do
    raise BadInput(f"cannot draw {n} tokens of {heads} heads, d = {d}, in {str(dtype).removeprefix('torch.')} whose "
                   f"rows of every {width} head{'s' if width != 1 else ''} are all distinct: give a larger -d")


def _distinct_slices(x, width) -> bool:
    """Whether the slices x[0, t, a:a + width] over every token t and head offset a are all distinct
    (bit for bit)."""
    import torch

    bits = x[0].contiguous().view(torch.int16 if x.element_size() == 2 else torch.int32 if x.element_size() == 4
                                  else torch.int64)
    rows = torch.cat([bits[:, a:a + width].reshape(bits.shape[0], -1) for a in range(x.shape[2] - width + 1)])
    return torch.unique(rows, dim=0).shape[0] == rows.shape[0]


class _Ring:
    """What every ring run checks the same way: its peers (ring neighbours only) and its pairs
    (the case's `expected`, per ring step)."""

    def communication(self, reports):
        """The first message to or from another than a ring neighbour, or None."""
        for rep in reports:
            for what, peer in rep["peers"]:
                want = (rep["rank"] + (1 if what == "send" else -1)) % self.m
                if peer != want:
                    return self.difference("ring", f"rank {rep['rank']} {what}s {'to' if what == 'send' else 'from'} "
                                           f"rank {peer}, not its ring neighbour {want}", rank=rep["rank"])
        return None

    def summary(self, reports) -> str:
        return "ring-local: sent to rank (r + 1) mod m only, received from (r − 1) mod m"

    def allowed(self, name, tolerance) -> float:
        """The tolerance of quantity `name`: a gradient is summed over the m ring steps, each partial
        rounded to the dtype once: m roundings."""
        return tolerance if name == "out" else tolerance * self.m

    def compare(self, kind, calls):
        if not hasattr(self, "_expected"):
            self._expected = self.expected()
        return _compare(self, kind, calls, self._expected)


class _Single(_Ring):
    """One single-sequence run: n tokens of `cp` on m ranks; `fn(q, k, v, causal=...)` on (1, n/m, h, d)."""

    def __init__(self, cp: ContextParallel, n: int, m: int):
        self.cp, self.n, self.m, self.key, self.lengths = cp, n, m, n, None
        self.positions = cp.positions(params(n, m))

    def call(self, fn, local, rank):
        return fn(*local, causal=self.cp.causal)

    def reference(self, torch, q, k, v, do):
        """out, dq, dk, dv of the whole sequence, (1, n, h, d) in float64."""
        ref = [x.double().transpose(1, 2).detach().requires_grad_(True) for x in (q, k, v)]
        o = torch.nn.functional.scaled_dot_product_attention(*ref, is_causal=self.cp.causal)
        o.backward(do.double().transpose(1, 2))
        return [x.transpose(1, 2) for x in (o.detach(), ref[0].grad, ref[1].grad, ref[2].grad)]

    def expected(self) -> set:
        return _schedule(self.cp, self.m, self.n)

    def excluded(self, qt, kt) -> str | None:
        """Why the mask excludes (query, key), or None when it allows it."""
        return None if self.cp.computes(params(self.n, self.m), qt, kt) else "the mask excludes it (key after query)"

    def difference(self, what, message, **kw):
        return Difference(self.m, self.n, what, message, **kw)


class Packed(_Ring):
    """One packed run: documents of `lengths` laid out by the varlen row `v` on m ranks; the
    varlen function takes (T/m, h, d) rows, the local prefix sums cu_seqlens // m (int32) and their
    largest difference. The all-gather machine's run (`allgather_conform`) is one of these with
    its own layout, call and checks."""

    def __init__(self, v: Varlen, lengths: tuple, m: int):
        self.v, self.lengths, self.m, self.key = v, lengths, m, lengths
        self.n = sum(lengths)
        self.positions = v.positions(lengths, m)
        self.doc = v.document(lengths, m)

    def call(self, fn, local, rank):
        import torch

        cu = torch.tensor(cu_seqlens(self.lengths), dtype=torch.int32) // self.m
        out = fn(*(x[0] for x in local), cu, max(self.lengths) // self.m, causal=self.v.causal)
        return out.unsqueeze(0) if isinstance(out, torch.Tensor) and out.dim() == 3 else out

    def reference(self, torch, q, k, v, do):
        """out, dq, dk, dv per document (SDPA and autograd on its own tokens), (1, T, h, d) float64."""
        parts = [[] for _ in QUANTITIES]
        for a, b in zip(cu_seqlens(self.lengths), cu_seqlens(self.lengths)[1:]):
            ref = [x[:, a:b].double().transpose(1, 2).detach().requires_grad_(True) for x in (q, k, v)]
            o = torch.nn.functional.scaled_dot_product_attention(*ref, is_causal=self.v.causal)
            o.backward(do[:, a:b].double().transpose(1, 2))
            for part, x in zip(parts, (o.detach(), ref[0].grad, ref[1].grad, ref[2].grad)):
                part.append(x.transpose(1, 2))
        return [torch.cat(part, dim=1) for part in parts]

    def expected(self) -> set:
        """(rank, step, query, key): rank r at step s, its queries with rank (r − s) mod m's keys
        where the row computes the pair."""
        c = self.n // self.m
        own = [self.positions[r * c:(r + 1) * c].tolist() for r in range(self.m)]
        return {(r, s, qt, kt) for r in range(self.m) for s in range(self.m)
                for qt in own[r] for kt in own[(r - s) % self.m] if self.v.computes(self.lengths, self.m, qt, kt)}

    def excluded(self, qt, kt) -> str | None:
        if self.v.computes(self.lengths, self.m, qt, kt):
            return None
        if self.doc[qt] != self.doc[kt]:
            return (f"it crosses documents (query in document {self.doc[qt] + 1}, key in document "
                    f"{self.doc[kt] + 1})")
        return "the mask excludes it (key after query)"

    def difference(self, what, message, **kw):
        return Difference(self.m, self.n, what, message, lengths=self.lengths, **kw)


def _rank_main(rank, m, cases, store, fn, setup, results):
    """One rank: its tokens of every case, the implementation's forward and backward, its report.
    An exception inside the implementation is its error; anything else is ours (internal)."""
    try:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        import datetime

        import torch
        import torch.distributed as dist

        torch.set_num_threads(1)
        rec = kernels.RECORDER
        rec.rank = rank
        dist.init_process_group("gloo", store=dist.FileStore(store, m), rank=rank, world_size=m,
                                timeout=datetime.timedelta(seconds=setup.timeout))
        kernels.install_clock(dist)
        for case in cases:
            n = case.n
            report = {"rank": rank, "n": case.key, "error": None, "calls": [], "peers": [], "numerics": None}
            q, k, v, do = draw_inputs(torch, n, setup.heads, setup.d, setup.seed, getattr(torch, setup.dtype),
                                      getattr(case, "width", None))
            mine = torch.as_tensor(case.positions[rank * (n // m):(rank + 1) * (n // m)])
            rec.start(q, k, v)
            rec.calls.clear()
            rec.peers.clear()
            local = [x[:, mine].clone().requires_grad_(True) for x in (q, k, v)]
            try:
                report["pass"] = "forward"
                out = case.call(fn, local, rank)
                rec.rounds = 0                       # the backward pass walks the ring anew
                rec.phase = report["pass"] = "backward"
                out.backward(do[:, mine])
            except Exception as err:             # the implementation's: its message, one line
                text = str(err).strip().splitlines()
                report["error"] = f"{type(err).__name__}: {text[0] if text else ''}"
            report["calls"], report["peers"] = list(rec.calls), list(rec.peers)
            report["collectives"] = list(rec.collectives)
            if report["error"] is None:
                report["numerics"] = _numerics(torch, case, q, k, v, do, mine, out, local)
            results.put(report)
            if report["error"] is not None:
                return
        dist.destroy_process_group()
    except Exception as err:
        results.put({"rank": rank, "internal": f"{type(err).__name__}: {err}"})


QUANTITIES = ("out", "dq", "dk", "dv")


def _numerics(torch, case, q, k, v, do, mine, out, local):
    """{quantity: (error, local slot of the worst token)} for out, dq, dk, dv on this rank: error
    is the largest |difference| from the float64 reference relative to the quantity's largest
    |value| over the whole sequence, or to `errors.FLOOR` where that is smaller (`error_scale`)."""
    want = dict(zip(QUANTITIES, case.reference(torch, q, k, v, do)))
    got = dict(zip(QUANTITIES, (out.detach(), local[0].grad, local[1].grad, local[2].grad)))
    errors = {}
    for name in QUANTITIES:
        full = want[name]
        if got[name] is None or got[name].shape != full[:, mine].shape:
            errors[name] = (math.inf, 0)
            continue
        diff = (got[name].double() - full[:, mine]).abs() / error_scale(float(full.abs().max()))
        errors[name] = (float(diff.max()), int(diff.amax(dim=(0, 2, 3)).argmax()))
    return errors


def _judge(case, reports, failure, tolerance, keys=None):
    """(difference or None, kernel calls, max relative error) of the run of `case` (at its m)."""
    m, n = case.m, case.n
    keys = keys or [case.key]
    if any(r is None for r in reports) or any(r["error"] for r in reports):
        bad = next((r for r in reports if r is not None and r["error"]), None)
        if bad is None and isinstance(failure, dict) and keys.index(failure["n"]) <= keys.index(case.key):
            bad = failure
        if bad is None:
            return case.difference("error", "a rank gave no report (it ended early)"), 0, None
        sent = [p for what, p in bad["peers"] if what == "send"]
        note = f"; it had sent to rank{'s' if len(set(sent)) > 1 else ''} {', '.join(map(str, sorted(set(sent))))}" if sent else ""
        self_send = " (itself)" if bad["rank"] in sent else ""
        during = f" in the {bad['pass']} pass" if bad.get("pass") else ""
        verb = "" if bad.get("died") else "raised "
        return case.difference("error", f"rank {bad['rank']}{during} {verb}{bad['error']}{note}{self_send}",
                               rank=bad["rank"]), 0, None
    diff = case.communication(reports)
    if diff is not None:
        return diff, 0, None
    calls = [c for rep in reports for c in rep["calls"]]
    for kind in ("forward", "backward"):
        diff = case.compare(kind, [c for c in calls if c.kind == kind])
        if diff is not None:
            return diff, len(calls), None
    worst = max(err for rep in reports for err, _ in rep["numerics"].values())
    for name in QUANTITIES:
        allowed = case.allowed(name, tolerance)
        for rep in reports:
            err, slot = rep["numerics"][name]
            if err <= allowed:
                continue
            token = int(case.positions[rep["rank"] * (n // m) + slot])
            return case.difference("numerics", f"{name} of token {token} on rank {rep['rank']} differs from "
                                   f"{'scaled_dot_product_attention' if name == 'out' else 'autograd'} by "
                                   f"{err:.3g} (relative to its largest value, or to {FLOOR:g} where that is smaller; "
                                   f"tolerance {allowed:g})",
                                   rank=rep["rank"], tokens=(token,)), len(calls), err
    return None, len(calls), worst


def _schedule(cp, m, n) -> set:
    """The (rank, step, query, key) of the registered schedule of `cp` (0-based), read from its
    steps on ints: the iterations whose guard holds, one per pair (the column loop aside)."""
    return ring_pairs(RING_PASSES[cp.name], n, m)


def ring_pairs(schedule, n: int, m: int) -> set:
    """(PE − 1, s − 1, A − 1, B − 1) of every active iteration of a ring pass with c = 1 (and, in a
    forward's ring step, its scores: u = 1), its step run once on the arrays of every (s, l, i, b)."""
    import numpy as np

    phase = schedule.phases[0]
    P = params(n, m)
    s, l, i, b = (x.ravel() for x in np.meshgrid(np.arange(1, m + 1), np.arange(1, m + 1), np.arange(1, P.k + 1),
                                                 np.arange(1, P.k + 1), indexing="ij"))
    st = phase.step(P, types.SimpleNamespace(s=s, i=i, u=1, b=b, c=1, l=l))
    pe, guard, A, B = (np.broadcast_to(np.asarray(x), s.shape) for x in (st.pe, st.guard, *st.target.idx))
    keep = guard.astype(bool)
    return set(zip((pe[keep] - 1).tolist(), (s[keep] - 1).tolist(), (A[keep] - 1).tolist(), (B[keep] - 1).tolist()))


def _compare(case, kind, calls, expected):
    m, n = case.m, case.n
    done = Counter((c.rank, c.step, q, k) for c in calls for q, k in c.pairs())
    wrong = [(key, "extra") for key, count in done.items() if key not in expected] + \
            [(key, "twice") for key, count in done.items() if key in expected and count > 1] + \
            [(key, "missing") for key in expected if key not in done]
    if not wrong:
        return None
    (rank, step, qt, kt), how = min(wrong, key=lambda w: (w[0][1], w[0][0], w[0][2], w[0][3]))
    pos = case.positions.tolist()
    home_q, home_k = pos.index(qt) // (n // m) if qt >= 0 else -1, pos.index(kt) // (n // m) if kt >= 0 else -1
    why = case.excluded(qt, kt) if qt >= 0 and kt >= 0 else None
    if how == "missing":
        msg = f"rank {rank} never computes (query {qt}, key {kt}) at ring step {step}, as the schedule does"
    elif how == "twice":
        msg = f"rank {rank} computes (query {qt}, key {kt}) {done[(rank, step, qt, kt)]} times at ring step {step}"
    elif qt < 0 or kt < 0:
        msg = (f"rank {rank} at ring step {step} passes the kernel rows that are no token's "
               f"({'query' if qt < 0 else 'key'}): the implementation changed them")
    elif why is not None:
        msg = f"rank {rank} at ring step {step} computes (query {qt}, key {kt}): {why}"
    else:
        msg = (f"rank {rank} computes (query {qt}, key {kt}) at ring step {step}; the schedule computes "
               f"it on rank {home_q} at step {(home_q - home_k) % m}")
    return case.difference(kind, f"{kind}: {msg}", rank=rank, step=step, tokens=(qt, kt))
