"""`prove conform TARGET --impl NAME [--world-sizes 2,3,4] [-n ...]`: run a real context-parallel
implementation on a gloo process group of CPU processes, its flash-attn kernels replaced by
recording CPU stand-ins, and hold its kernel calls, communication, outputs and gradients against
the target's schedule and PyTorch (proofs/cp/conform.py).

A varlen target (packed sequences, schedules/documents.py) runs the implementation's varlen
function on lengths vectors (`--lengths`, `--vectors`) that meet the target's side condition; a
`--lengths` that meets it at no world size asked for is refused before any run. The all-gather
targets (`llama3`, `llama3-varlen`: schedules/allgather.py) run ring-flash-attn's
`llama3_flash_attn_varlen_func` against the all-gather machine (proofs/cp/allgather_conform.py)."""

from __future__ import annotations

import argparse
import time

from ringproof.errors import BadInput
from ringproof.proofs.cli.common import ArgumentParser, bounded_int, seconds, write_json
from ringproof.schedules.allgather import ALLGATHER, allgather
from ringproof.schedules.context_parallel import SCHEDULES
from ringproof.schedules.documents import VARLEN, parse_lengths, varlen

MAX_LENGTHS = 50        # --lengths given, and --vectors per world size

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _sizes(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated integers ≥ 1, got {text!r}")
    return sorted(set(values))


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove conform", description="Run a context-parallel attention "
                       "implementation on world_size CPU processes (torch.distributed, gloo, loopback) "
                       "with exact CPU stand-ins for flash-attn's kernels that record every call, and "
                       "check that its (rank, ring step, query, key) pairs, forward and backward, are "
                       "exactly the target's schedule, that it talks only to ring neighbours, and that "
                       "its outputs and gradients equal scaled_dot_product_attention and autograd.",
                       epilog="exit codes: 0 conforms at every size, 1 the first difference (world size, "
                       "n or lengths, rank, ring step, tokens), 2 no answer within --timeout, 64 bad input or an "
                       "implementation that cannot be loaded. Needs the [cp] extra: pip install -e '.[cp]'.")
    p.add_argument("target", help=f"one of {', '.join(SCHEDULES)}; varlen (packed documents): "
                   f"{', '.join(VARLEN)}; all-gather (Llama 3): {', '.join(ALLGATHER)}")
    p.add_argument("--impl", required=True, help="ring-flash-attn (the PyPI package, loaded without its "
                   "__init__), torch (PyTorch's own ring attention: ring-attention, ring-attention-causal, "
                   "zigzag) or MODULE:FUNCTION with the signature of its *_func(q, k, v, ..., causal=...) "
                   "(varlen targets: of its *_varlen_func(q, k, v, cu_seqlens, max_seqlen, ..., causal=...), "
                   "given the local cu_seqlens // world size; llama3 targets: fn(q, k, v, cu_seqlens, causal=...) "
                   "on the rank's contiguous T/m rows, given the global cu_seqlens)")
    p.add_argument("--heads-k-stride", type=bounded_int(1, 64, "a number of heads"), default=None, metavar="K",
                   help="llama3 targets, --impl ring-flash-attn: the library's heads_k_stride, heads all-gathered "
                   "at a time (default 1; it must divide --heads)")
    p.add_argument("--rotate", choices=("allgather", "alltoall"), default=None,
                   help="--impl torch: PyTorch's rotate method for K/V (default: both, one after the other)")
    p.add_argument("--world-sizes", type=_sizes, default=[2, 3, 4], metavar="M,M,...",
                   help="world sizes run, one process group each (default 2,3,4)")
    p.add_argument("-n", type=_sizes, default=None, metavar="N,N,...",
                   help="sequence lengths; those the target does not allow at a world size are skipped "
                        "there (default: per world size m, the least n the target allows and 16·m)")
    p.add_argument("--lengths", type=_lengths, action="append", default=[], metavar="L,L,...",
                   help="varlen targets: a lengths vector (the documents' lengths, packed in this order), "
                        "repeatable; run at every world size where it meets the target's side condition")
    p.add_argument("--vectors", type=bounded_int(0, MAX_LENGTHS, "a number of lengths vectors"), default=None,
                   metavar="K", help="varlen targets: K random lengths vectors per world size meeting the side "
                   "condition (1 to 4 documents of 1 to 3 units each), drawn from --seed (default 3 "
                   "without --lengths, else 0)")
    p.add_argument("--json", action="store_true", help="the result as JSON (docs/json-schemas/conform.json)")
    p.add_argument("--dtype", choices=DTYPES, default="float16",
                   help="dtype of q, k, v (default float16; flash-attn takes float16 and bfloat16)")
    p.add_argument("--heads", type=bounded_int(1, 64, "a number of heads"), default=2)
    p.add_argument("-d", type=bounded_int(1, 256, "a head dimension"), default=8)
    p.add_argument("--seed", type=bounded_int(0, 2**31 - 1, "a seed"), default=0)
    p.add_argument("--timeout", type=seconds, default=120.0, help="seconds a world size may take (default 120)")
    return p


def _lengths(text: str) -> tuple[int, ...]:
    try:
        return parse_lengths(text)
    except BadInput as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix(f"--lengths {text[:80]!r}: ")) from None


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return 0
    cp = SCHEDULES.get(args.target.removesuffix("-bwd"))
    packed = varlen(args.target)
    gathered = allgather(args.target)
    if cp is None and packed is None and gathered is None:
        raise BadInput(f"unknown context-parallel target {args.target[:80]!r}: expected one of "
                       f"{', '.join([*SCHEDULES, *VARLEN, *ALLGATHER])}")
    if max(args.world_sizes) > 16:
        raise BadInput(f"--world-sizes: at most 16 processes, got {max(args.world_sizes)}")
    if args.rotate is not None and args.impl != "torch":
        raise BadInput("--rotate is for --impl torch (PyTorch's rotate methods)")
    if args.heads_k_stride is not None and (gathered is None or args.impl != "ring-flash-attn"):
        raise BadInput("--heads-k-stride is for the llama3 targets with --impl ring-flash-attn (the library's "
                       "heads_k_stride)")
    if args.impl == "torch":
        from ringproof.proofs.cli import conform_torch

        return conform_torch.main(args, cp or packed or gathered, stdout)
    if gathered is not None:
        return _main_allgather(args, gathered, stdout)
    if packed is not None:
        return _main_varlen(args, packed, stdout)
    if args.lengths or args.vectors is not None:
        raise BadInput(f"--lengths and --vectors are for the varlen targets ({', '.join(VARLEN)}); "
                       f"{cp.name} takes -n")
    from ringproof.proofs.cp.conform import Setup, conform, load_implementation

    fn = load_implementation(args.impl, cp)
    if args.n and not any(cp.valid(n, m) for n in args.n for m in args.world_sizes):
        raise BadInput(f"no size to run: {cp.name} needs {cp.requires_text}, got n in {args.n} and "
                       f"world sizes {args.world_sizes}")
    setup = Setup(heads=args.heads, d=args.d, seed=args.seed, dtype=args.dtype, timeout=args.timeout)
    start = time.monotonic()
    if args.json:
        result = conform(cp, fn, args.impl, args.world_sizes, args.n, setup)
        return _json(args, result, [], time.monotonic() - start, stdout)
    stdout.write(f"{cp.name} against {args.impl}: {args.dtype}, {args.heads} heads, d = {args.d}, batch 1; "
                 f"schedule: rank r at ring step s computes its queries with rank (r − s) mod m's "
                 f"keys{', key ≤ query' if cp.causal else ''}\n")
    result = conform(cp, fn, args.impl, args.world_sizes, args.n, setup)
    for m, n, calls, error, _ in result.runs:
        stdout.write(f"  world size {m}, n = {n}: {calls} kernel calls; forward and backward pairs "
                     f"equal the schedule's; ring-local; max error {error:.2g}\n")
    return _answer(result, f"({time.monotonic() - start:.1f} s)", "conforms at every size run", stdout)


def _answer(result, took: str, conforms: str, stdout) -> int:
    """The last line and the exit code: unknown (2), the first difference (1) or `conforms` (0)."""
    if result.unknown:
        stdout.write(f"unknown: {result.unknown} {took}\n")
        return 2
    if result.difference is not None:
        stdout.write(f"differs: {result.difference} {took}\n")
        return 1
    stdout.write(f"{conforms} {took}\n")
    return 0


def _main_varlen(args, v, stdout) -> int:
    """The varlen target `v`: the plan of lengths vectors (refused before any run outside the side
    condition), the run, its lines or JSON."""
    if args.n:
        raise BadInput(f"-n is for single-sequence targets; {v.name} takes --lengths and --vectors")
    if len(args.lengths) > MAX_LENGTHS:
        raise BadInput(f"--lengths: at most {MAX_LENGTHS} vectors, got {len(args.lengths)}")
    from ringproof.proofs.cp.conform import (RING_FLASH_ATTN_LACKS, Setup, conform_varlen, load_implementation,
                                             varlen_plan)

    if args.impl == "ring-flash-attn" and v.name.removesuffix("-bwd") in RING_FLASH_ATTN_LACKS:
        raise BadInput(RING_FLASH_ATTN_LACKS[v.name.removesuffix("-bwd")])
    vectors = args.vectors if args.vectors is not None else (0 if args.lengths else 3)
    plan, skipped = varlen_plan(v, args.world_sizes, args.lengths, vectors, args.seed)
    if not any(vs for _, vs in plan):
        raise BadInput(f"no lengths vector to run: give --lengths or --vectors K ≥ 1 ({v.name} needs {v.requires_text})")
    fn = load_implementation(args.impl, v)
    setup = Setup(heads=args.heads, d=args.d, seed=args.seed, dtype=args.dtype, timeout=args.timeout)
    start = time.monotonic()
    if not args.json:
        stdout.write(f"{v.name} against {args.impl}: {args.dtype}, {args.heads} heads, d = {args.d}; packed "
                     f"documents, each rank given its tokens of every document and cu_seqlens // m; schedule: "
                     f"rank r at ring step s computes its queries with rank (r − s) mod m's keys of the same "
                     f"document{', key ≤ query' if v.causal else ''}; side condition {v.requires_text}\n")
    result = conform_varlen(v, fn, args.impl, plan, setup)
    took = time.monotonic() - start
    if args.json:
        return _json(args, result, skipped, took, stdout)
    for m, lengths, calls, error, _ in result.runs:
        stdout.write(f"  world size {m}, lengths {','.join(map(str, lengths))}: {calls} kernel calls; forward and "
                     f"backward pairs equal the schedule's, none across documents; ring-local; max error {error:.2g}\n")
    for lengths, m in skipped:
        stdout.write(f"  not run: lengths {','.join(map(str, lengths))} at world size {m} (outside {v.requires_text})\n")
    ran = sorted({m for m, *_ in result.runs})
    return _answer(result, f"({took:.1f} s)", f"conforms at every world size and lengths vector run: "
                   f"{len(result.runs)} vector{'s' if len(result.runs) > 1 else ''} at world "
                   f"size{'s' if len(ran) > 1 else ''} {', '.join(map(str, ran))}", stdout)


def _main_allgather(args, t, stdout) -> int:
    """The all-gather target `t`: the plan (refused before any run where m ∤ T), the run of
    ring-flash-attn's llama3 function (or a MODULE:FUNCTION of its signature), its lines or JSON."""
    from ringproof.proofs.cp import allgather_conform as ac
    from ringproof.proofs.cp.conform import MAX_TOKENS, Setup, load_implementation

    stride = args.heads_k_stride or 1
    if args.heads % stride:
        raise BadInput(f"--heads-k-stride {stride} does not divide --heads {args.heads} (the library asserts "
                       "nheads_k % heads_k_stride == 0)")
    if t.single:
        if args.lengths or args.vectors is not None:
            raise BadInput(f"--lengths and --vectors are for llama3-varlen; {t.name} takes -n")
        if args.n and max(args.n) > MAX_TOKENS:
            raise BadInput(f"-n {max(args.n)}: at most {MAX_TOKENS} tokens here")
        if args.n and not any(n % m == 0 for n in args.n for m in args.world_sizes):
            raise BadInput(f"no size to run: {t.name} needs {t.requires_text}, got n in {args.n} and world sizes "
                           f"{args.world_sizes}")
        plan = [(m, [(n,) for n in (args.n or sorted({m, 16 * m})) if n % m == 0]) for m in args.world_sizes]
        skipped = []
    else:
        if args.n:
            raise BadInput(f"-n is for single-sequence targets; {t.name} takes --lengths and --vectors")
        if len(args.lengths) > MAX_LENGTHS:
            raise BadInput(f"--lengths: at most {MAX_LENGTHS} vectors, got {len(args.lengths)}")
        vectors = args.vectors if args.vectors is not None else (0 if args.lengths else 3)
        plan, skipped = ac.plan(t, args.world_sizes, args.lengths, vectors, args.seed)
        if not any(vs for _, vs in plan):
            raise BadInput(f"no lengths vector to run: give --lengths or --vectors K ≥ 1 ({t.name} needs "
                           f"{t.requires_text})")
    fn = load_implementation(args.impl, t)
    library = args.impl == "ring-flash-attn"
    if library:
        fn = ac.Llama3(fn, stride)
    setup = Setup(heads=args.heads, d=args.d, seed=args.seed, dtype=args.dtype, timeout=args.timeout)
    start = time.monotonic()
    if not args.json:
        stdout.write(f"{t.name} against {args.impl}: {args.dtype}, {args.heads} heads, d = {args.d}; rank r given the "
                     f"contiguous tokens [rS, (r + 1)S), S = T/m, and the global cu_seqlens"
                     f"{f' ({ac.LIBRARY}, heads_k_stride {stride})' if library else ''}; schedule: the all-gather "
                     f"machine (K and V all-gathered, each rank's queries against their document's keys from its "
                     f"start, key ≤ query, dK and dV reduce-scattered home); side condition {t.requires_text}\n")
    result = ac.conform_allgather(t, fn, args.impl, plan, setup)
    took = time.monotonic() - start
    if args.json:
        return _json(args, result, skipped, took, stdout, {"heads_k_stride": stride if library else None})
    for m, lengths, calls, error, _ in result.runs:
        where = f"n = {lengths[0]}" if t.single else f"lengths {','.join(map(str, lengths))}"
        stdout.write(f"  world size {m}, {where}: {calls} kernel calls; forward and backward pairs equal the all-gather "
                     f"machine's in every head, each once{'' if t.single else ', none across documents'}; "
                     f"{result.notes[(m, lengths)]}; max error {error:.2g}\n")
    for lengths, m in skipped:
        stdout.write(f"  not run: lengths {','.join(map(str, lengths))} at world size {m} (outside {t.requires_text})\n")
    ran = sorted({m for m, *_ in result.runs})
    what = "size" if t.single else "lengths vector"
    return _answer(result, f"({took:.1f} s)", f"conforms at every world size and {what} run: "
                   f"{len(result.runs)} {what}{'s' if len(result.runs) > 1 else ''} at world "
                   f"size{'s' if len(ran) > 1 else ''} {', '.join(map(str, ran))}", stdout)


def _json(args, result, skipped, seconds_taken, stdout, extra=None) -> int:
    """The result as the `conform` JSON document; the exit code of the text form."""
    diff = result.difference
    verdict = "unknown" if result.unknown else "differs" if diff is not None else "conforms"
    doc = {"target": result.target, "impl": result.impl, "dtype": args.dtype, "heads": args.heads, "d": args.d,
           "seed": args.seed, "verdict": verdict,
           "runs": [{"world_size": m, "n": key if isinstance(key, int) else sum(key),
                     "lengths": None if isinstance(key, int) else list(key), "kernel_calls": calls,
                     "max_error": error, "seconds": round(sec, 3),
                     "communication": result.notes.get((m, key))} for m, key, calls, error, sec in result.runs],
           "skipped": [{"world_size": m, "lengths": list(lengths)} for lengths, m in skipped],
           "difference": None if diff is None else {
               "world_size": diff.m, "n": diff.n, "lengths": None if diff.lengths is None else list(diff.lengths),
               "what": diff.what, "message": diff.message, "rank": diff.rank, "step": diff.step,
               "tokens": list(diff.tokens), "text": str(diff)},
           "unknown": result.unknown, "seconds": round(seconds_taken, 3), **(extra or {})}
    write_json("conform", doc, stdout)
    return 2 if result.unknown else 1 if diff is not None else 0
