"""`prove simulate TARGET -n N -m M [-d D] [--heads H] [--batch B]`: run the cycle-level ring model
and compare with numpy.

Heads and batches are outer loops: the H·B attention problems share no data, so the ring runs one
after another, each exactly the single-head schedule on its own q, k, v. One head is simulated (its
trace, machine checks and numerics) and the cycles are multiplied by H·B; utilization is the single
head's."""

from __future__ import annotations

import math

from ringproof.model.ring.machine import run
from ringproof.model.ring.numerics import describe_difference
from ringproof.proofs.cli.common import ArgumentParser, Exit, bounded_int, output_file, positive_int, write_json
from ringproof.proofs.cli.targets import resolve
from ringproof.errors import BadInput
from ringproof.schedules.dsl import check_size


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove simulate", description="Execute a schedule on the ring model for "
                       "one (n, m) and compare y with numpy attention.",
                       epilog="exit codes: 0 the run is valid and y matches numpy (relative error "
                       "≤ 1e-9), 1 a machine rule broke or y differs, 64 bad input.")
    p.add_argument("target", help="a registered target (`prove --help` lists them) or a schedule file (.py)")
    p.add_argument("-n", type=int, help="number of vectors (sequence length); a varlen target takes --lengths instead")
    p.add_argument("-m", type=int, required=True, help="number of PEs; m must divide n (and d)")
    p.add_argument("-d", type=int, default=None, help="head dimension (default n; d ≠ n needs a "
                   "-general schedule)")
    p.add_argument("--heads", type=positive_int, default=1, help="attention heads, run one after another")
    p.add_argument("--batch", type=positive_int, default=1, help="batch size, run one after another")
    p.add_argument("--kv-heads", type=positive_int, default=None, help="an all-gather target: KV heads "
                   "(GQA; must divide --heads; default --heads)")
    p.add_argument("--heads-k-stride", type=positive_int, default=None, help="an all-gather target: KV heads "
                   "gathered at a time, one head group (must divide --kv-heads; default --kv-heads)")
    p.add_argument("--scale", default="paper", help="factor on q·k before the softmax: 'paper' (1, "
                   "the paper's phase 1, default), 'sdpa' (1/sqrt(d), scaled dot-product attention) "
                   "or a number")
    p.add_argument("--seed", type=bounded_int(0, 2**32 - 1, "a seed"), default=0, help="seed of the random inputs")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--lengths", action="append", metavar="L1,L2,...",
                   help="a varlen target: the document lengths of the packing to run (with -m, -d)")
    p.add_argument("--idle-pes", action="store_true",
                   help="also the cycles when a PE with nothing to do in a ring step does not hold the others "
                        "back (each ring step lasts as its busiest PE's active ops; JSON cycles_idle_pes)")
    p.add_argument("--picture", metavar="FILE.svg", help="write the schedule as an SVG PE × cycle grid; "
                   "the iterations of a broken rule are marked, with the cycles around them")
    p.add_argument("--cycles", type=positive_int, default=6, help="with --picture: cycles shown per phase (default 6)")
    return p


def _scale(text: str, d: int) -> float:
    if text == "paper":
        return 1.0
    if text == "sdpa":
        return 1 / math.sqrt(d)
    try:
        value = float(text)
    except ValueError:
        raise BadInput(f"--scale must be 'paper', 'sdpa' or a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise BadInput(f"--scale must be a positive, finite number (the factor on q·k), got {text!r}")
    return value


MEMORY_N = 64        # the peak memory per PE is measured on the whole trace, up to this size


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return Exit.OK
    from ringproof.proofs.cli.targets import machine
    if machine(args.target) == "allgather":        # the all-gather machine
        from ringproof.proofs.cli import allgather as gathered
        return gathered.simulate(args, resolve(args.target), stdout)
    from ringproof.schedules.documents import Varlen, varlen
    found = varlen(args.target) or (resolve(args.target) if args.lengths or args.target.endswith(".py") else None)
    if isinstance(found, Varlen):
        from ringproof.proofs.cli import varlen as packed
        return packed.simulate(args, found, stdout)
    from ringproof.schedules.allgather import AllGather
    if isinstance(found, AllGather):               # a schedule file's all-gather schedule
        from ringproof.proofs.cli import allgather as gathered
        return gathered.simulate(args, found, stdout)
    if args.lengths:
        raise BadInput(f"--lengths names a packing of a varlen target, not of {args.target[:60]!r}")
    if args.kv_heads is not None or args.heads_k_stride is not None:
        raise BadInput(f"--kv-heads and --heads-k-stride are options of an all-gather target, not of {args.target[:60]!r}")
    if args.n is None:
        raise BadInput("prove simulate needs -n (the sequence length)")
    check_size(args.n, args.m, args.d)
    picture = output_file(args.picture, "--picture") if args.picture else None
    if picture and picture[0].suffix.lower() != ".svg":
        raise BadInput(f"--picture {args.picture!r}: the picture is written as SVG; name a .svg file "
                       "(a browser opens it, and prints it to PDF or PNG)")
    d = args.n if args.d is None else args.d
    scale = _scale(args.scale, d)
    schedule = found or resolve(args.target)
    r = run(schedule, args.n, args.m, seed=args.seed, d=args.d, scale=scale)
    if picture:
        _picture(schedule, args, r.violations, *picture, stderr)
    copies = args.heads * args.batch
    peaks = top = None
    if r.ok and args.n <= MEMORY_N and d <= MEMORY_N:           # the whole trace is needed
        from ringproof.model.ring.memory import at_peak
        from ringproof.model.ring.trace import build_trace
        top = at_peak(build_trace(schedule, args.n, args.m, args.d))
        peaks = top.pop("per_pe")
    data = {"target": args.target, "n": args.n, "m": args.m, "d": d, "heads": args.heads,
            "batch": args.batch, "scale": scale, "cycles": r.cycles * copies, "cycles_per_head": r.cycles,
            "ops": {k: v * copies for k, v in r.ops.items()}, "utilization": r.utilization,
            "max_rel_error": r.max_rel_error, "first_difference": r.difference, "memory_peak_per_pe": peaks,
            "memory_at_peak": top,
            "violations": [{"rule": v.rule, "message": v.message, "iterations": list(v.iterations)}
                           for v in r.violations]}
    if args.idle_pes:
        from ringproof.model.ring.trace import idle_cycles, idle_violations
        data["idle_pes_violations"] = idle_violations(schedule, args.n, args.m, args.d)
        data["cycles_idle_pes"] = None if data["idle_pes_violations"] else \
            idle_cycles(schedule, args.n, args.m, args.d) * copies
    if args.json:
        write_json("simulate", data, stdout)
    else:
        stdout.write(f"{schedule.name}: n={args.n}, d={d}, m={args.m}"
                     + (f", {args.heads} heads × batch {args.batch}" if copies > 1 else "") + "\n")
        stdout.write(f"cycles        {data['cycles']}"
                     + (f" ({copies} × {r.cycles}: one head simulated, heads and batches run one "
                        "after another and share no data)" if copies > 1 else "") + "\n")
        if args.idle_pes and data["idle_pes_violations"]:
            stdout.write(f"cycles, idle PEs not waiting: not valid ({data['idle_pes_violations'][0]})\n")
        elif args.idle_pes:
            stdout.write(f"cycles, idle PEs not waiting {data['cycles_idle_pes']} (a ring step lasts as its "
                         "busiest PE's active ops; phases without a ring step in lock step)\n")
        stdout.write("ops           " + ", ".join(f"{k} {v}" for k, v in data["ops"].items()) + "\n")
        stdout.write(f"utilization   {r.utilization:.4f}\n")
        stdout.write(f"max rel error {r.max_rel_error:.3g} (vs numpy)"
                     + (f"; first wrong entry {describe_difference(r.difference)}" if r.difference else "") + "\n")
        held = top and ", ".join(f"{a} {c}" for a, c in top["by_array"].items())
        stdout.write("memory        " + (f"peak data held per PE {'/'.join(map(str, peaks))} (PE {top['pe']} "
                                         f"at cycle {top['cycle']}: {held})" if peaks else
                                         f"not measured (a valid run with n, d ≤ {MEMORY_N} only)") + "\n")
        for v in r.violations:
            stdout.write(f"violation     {v}\n")
            for it in v.iterations:
                stdout.write("              " + ", ".join(f"{k}={x}" for k, x in it.items()) + "\n")
        stdout.write("result        " + ("valid run, the output matches numpy\n" if r.ok else "FAILED\n"))
    return Exit.OK if r.ok else Exit.REFUTED


def _picture(schedule, args, violations, path, existed: bool, stderr) -> None:
    """The cycles shown, read alone from the schedule: a violation's with the cycles around them, or
    the first ones of every phase; one line on stderr says which and where."""
    from ringproof.model.ring.trace import Stream
    from ringproof.proofs.report import svg

    stream = Stream(schedule, args.n, args.m, args.d)
    iterations = [it for v in violations for it in v.iterations]
    broken = {it["cycle"] for it in iterations if "cycle" in it}
    cycles = svg.around(broken, stream) if broken else svg.first_cycles(stream, args.cycles)
    trace = svg.window(stream, cycles)
    marked = svg.failing_cells(trace, iterations)
    try:
        path.write_text(svg.picture(trace, cycles, marked))
    except OSError as err:
        raise BadInput(f"cannot write {args.picture}: {err.strerror}") from None
    which = ("the cycles around the broken rule, marked" if broken else
             f"the first {args.cycles} of each phase (--cycles)")
    stderr.write(f"prove simulate: picture {path}{' (replaced the file there)' if existed else ''}: "
                 f"{len(cycles)} of {stream.cycles} cycles, {which}\n")
