"""`prove conform TARGET --impl torch [--rotate allgather|alltoall]`: PyTorch's own ring attention
(`_templated_ring_attention` and its backward, with a recording exact CPU attention op) held against
the target's schedule under each rotate method (proofs/cp/torch_ring.py)."""

from __future__ import annotations

import time

from ringproof.errors import BadInput


def main(args, cp, stdout) -> int:
    from ringproof.proofs.cp import torch_ring
    from ringproof.proofs.cp.conform import Setup

    torch_ring.check_target(cp)
    if getattr(args, "lengths", None) or getattr(args, "vectors", None) is not None:
        raise BadInput(f"--lengths and --vectors are for the varlen targets; {cp.name} takes -n")
    torch_ring.attention_module()
    if args.n and not any(cp.valid(n, m) for n in args.n for m in args.world_sizes):
        raise BadInput(f"no size to run: {cp.name} needs {cp.requires_text}, got n in {args.n} and "
                       f"world sizes {args.world_sizes}")
    methods = torch_ring.ROTATE_METHODS if args.rotate is None else (args.rotate,)
    setup = Setup(heads=args.heads, d=args.d, seed=args.seed, dtype=args.dtype, timeout=args.timeout)
    import torch

    balance = "on: the head-tail layout" if torch_ring.TARGETS[cp.name] else "off: contiguous blocks"
    if args.json:
        start = time.monotonic()
        runs = torch_ring.conform_torch(cp, args.world_sizes, args.n, setup, methods)
        return _json(args, cp, runs, time.monotonic() - start, torch.__version__, stdout)
    stdout.write(f"{cp.name} against torch ({torch.__version__}: _templated_ring_attention and its backward, "
                 f"exact CPU op; load balance {balance}; rotate {', '.join(methods)}): {args.dtype}, "
                 f"{args.heads} heads, d = {args.d}, batch 1; schedule: rank r at ring step s computes its "
                 f"queries with rank (r − s) mod m's keys{', key ≤ query' if cp.causal else ''}\n")
    start = time.monotonic()
    runs = torch_ring.conform_torch(cp, args.world_sizes, args.n, setup, methods)
    for run in runs:
        for m, n, calls, error, _ in run.result.runs:
            stdout.write(f"  rotate {run.rotate}, world size {m}, n = {n}: {calls} kernel calls; forward and "
                         f"backward pairs equal the schedule's; "
                         f"{torch_ring.communication(run.rotate, m, run.logs[(m, n)])}; max error {error:.2g}\n")
    took = f"({time.monotonic() - start:.1f} s)"
    last = runs[-1]
    if last.result.unknown:
        stdout.write(f"unknown: rotate {last.rotate}, {last.result.unknown} {took}\n")
        return 2
    if last.result.difference is not None:
        where = "" if last.result.difference.what == "layout" else f"rotate {last.rotate}, "
        stdout.write(f"differs: {where}{last.result.difference} {took}\n")
        return 1
    ran = sorted({m for run in runs for m, *_ in run.result.runs})
    stdout.write(f"conforms at every size run: rotate {', '.join(r.rotate for r in runs)}; world "
                 f"size{'s' if len(ran) > 1 else ''} {', '.join(map(str, ran))} {took}\n")
    return 0


def _json(args, cp, runs, seconds_taken, version, stdout) -> int:
    """The `conform` JSON document of ring-flash-attn's runs, with keys added: each run's `rotate`
    and `communication`, the difference's `rotate`, the methods run and torch's version."""
    from ringproof.proofs.cli.common import write_json
    from ringproof.proofs.cp import torch_ring

    last = runs[-1].result
    diff = last.difference
    verdict = "unknown" if last.unknown else "differs" if diff is not None else "conforms"
    doc = {"target": cp.name, "impl": "torch", "dtype": args.dtype, "heads": args.heads, "d": args.d,
           "seed": args.seed, "verdict": verdict,
           "runs": [{"world_size": m, "n": n, "lengths": None, "kernel_calls": calls, "max_error": error,
                     "seconds": round(sec, 3), "rotate": run.rotate,
                     "communication": torch_ring.communication(run.rotate, m, run.logs[(m, n)])}
                    for run in runs for m, n, calls, error, sec in run.result.runs],
           "skipped": [],
           "difference": None if diff is None else {
               "world_size": diff.m, "n": diff.n, "lengths": None, "what": diff.what, "message": diff.message,
               "rank": diff.rank, "step": diff.step, "tokens": list(diff.tokens), "text": str(diff),
               "rotate": None if diff.what == "layout" else runs[-1].rotate},
           "unknown": None if last.unknown is None else f"rotate {runs[-1].rotate}, {last.unknown}",
           "seconds": round(seconds_taken, 3), "rotate": [run.rotate for run in runs], "torch_version": version}
    write_json("conform", doc, stdout)
    return 2 if last.unknown else 1 if diff is not None else 0
