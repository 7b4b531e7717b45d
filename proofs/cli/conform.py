"""`prove conform TARGET --impl NAME [--world-sizes 2,3,4] [-n ...]`: run a real context-parallel
implementation on a gloo process group of CPU processes, its flash-attn kernels replaced by
recording CPU stand-ins, and hold its kernel calls, communication, outputs and gradients against
the target's schedule and PyTorch (proofs/cp/conform.py)."""

from __future__ import annotations

import argparse
import time

from ringproof.errors import BadInput
from ringproof.proofs.cli.common import ArgumentParser, bounded_int, seconds
from ringproof.proofs.cli.targets import layouts, parallel

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
                       "n, rank, ring step, tokens), 2 no answer within --timeout, 64 bad input or an "
                       "implementation that cannot be loaded. Needs the [cp] extra: pip install -e '.[cp]'.")
    p.later(lambda: f"one of {', '.join(layouts())}",
            p.add_argument("target", help="a context-parallel target"))
    p.add_argument("--impl", required=True, help="ring-flash-attn (the PyPI package, loaded without its "
                   "__init__) or MODULE:FUNCTION with the signature of its *_func(q, k, v, ..., causal=...)")
    p.add_argument("--world-sizes", type=_sizes, default=[2, 3, 4], metavar="M,M,...",
                   help="world sizes run, one process group each (default 2,3,4)")
    p.add_argument("-n", type=_sizes, default=None, metavar="N,N,...",
                   help="sequence lengths; those the target does not allow at a world size are skipped "
                        "there (default: per world size m, the least n the target allows and 16·m)")
    p.add_argument("--dtype", choices=DTYPES, default="float16",
                   help="dtype of q, k, v (default float16; flash-attn takes float16 and bfloat16)")
    p.add_argument("--heads", type=bounded_int(1, 64, "a number of heads"), default=2)
    p.add_argument("-d", type=bounded_int(1, 256, "a head dimension"), default=8)
    p.add_argument("--seed", type=bounded_int(0, 2**31 - 1, "a seed"), default=0)
    p.add_argument("--timeout", type=seconds, default=120.0, help="seconds a world size may take (default 120)")
    return p


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return 0
    cp = parallel(args.target)
    if max(args.world_sizes) > 16:
        raise BadInput(f"--world-sizes: at most 16 processes, got {max(args.world_sizes)}")
    from ringproof.proofs.cp.conform import Setup, conform, load_implementation

    fn = load_implementation(args.impl, cp)
    if args.n and not any(cp.valid(n, m) for n in args.n for m in args.world_sizes):
        raise BadInput(f"no size to run: {cp.name} needs {cp.requires_text}, got n in {args.n} and "
                       f"world sizes {args.world_sizes}")
    setup = Setup(heads=args.heads, d=args.d, seed=args.seed, dtype=args.dtype, timeout=args.timeout)
    stdout.write(f"{cp.name} against {args.impl}: {args.dtype}, {args.heads} heads, d = {args.d}, batch 1; "
                 f"schedule: rank r at ring step s computes its queries with rank (r − s) mod m's "
                 f"keys{', key ≤ query' if cp.causal else ''}\n")
    start = time.monotonic()
    result = conform(cp, fn, args.impl, args.world_sizes, args.n, setup)
    for m, n, calls, error, _ in result.runs:
        stdout.write(f"  world size {m}, n = {n}: {calls} kernel calls; forward and backward pairs "
                     f"equal the schedule's; ring-local; max error {error:.2g}\n")
    took = f"({time.monotonic() - start:.1f} s)"
    if result.unknown:
        stdout.write(f"unknown: {result.unknown} {took}\n")
        return 2
    if result.difference is not None:
        stdout.write(f"differs: {result.difference} {took}\n")
        return 1
    stdout.write(f"conforms at every size run {took}\n")
    return 0
