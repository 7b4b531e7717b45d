"""`prove report TARGET`: verify and write a Markdown, HTML or JSON report."""

from __future__ import annotations

from pathlib import Path

from ringproof.model.ring.limits import check_traceable
from ringproof.proofs.cli.argparsing import ArgumentParser, bounded_int, seconds
from ringproof.proofs.progress import Progress
from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.report.render import RENDER, grid
from ringproof.proofs.results import PROPERTIES, TIERS, Verdict
from ringproof.proofs.cli.targets import resolve
from ringproof.schedules.dsl import check_size
from ringproof.errors import BadInput


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove report", description="Verify a schedule and write a report: the "
                       "verdict table, counterexamples, counts, and a PE × cycle picture.",
                       epilog="exit codes: as `prove TARGET` (0 proved, 1 refuted, 2 unknown, 64 bad input).")
    p.add_argument("target")
    p.add_argument("--format", choices=sorted(RENDER), default="md")
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.add_argument("--tier", choices=TIERS, default="parametric")
    p.add_argument("--property", action="append", default=None, metavar="NAME")
    p.add_argument("--max-n", type=bounded_int(1, what="a size"), default=24)
    p.add_argument("--max-m", type=bounded_int(1, what="a size"), default=8)
    p.add_argument("--timeout", type=seconds, default=10.0)
    p.add_argument("-n", type=int, default=4, help="size of the schedule picture (default 4)")
    p.add_argument("-m", type=int, default=2, help="PEs of the schedule picture (default 2)")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.add_argument("--cycles", type=int, default=24, help="cycles shown in the picture (default 24)")
    return p


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return 0
    check_size(args.n, args.m)
    check_traceable(args.n)
    if args.tier == "bounded":
        check_traceable(args.max_n, "--max-n")
    if args.cycles < 1:
        raise BadInput(f"--cycles must be at least 1, got {args.cycles}")
    props = tuple(p for arg in (args.property or list(PROPERTIES)) for p in arg.split(","))
    schedule = resolve(args.target)
    with Progress(stderr, not args.quiet) as progress:
        results = verify(schedule, Options(props, args.tier, args.max_n, args.max_m, args.timeout,
                                           progress=progress))
    text = RENDER[args.format](args.target, schedule, results, grid(schedule, args.n, args.m, args.cycles))
    if args.output:
        try:
            Path(args.output).write_text(text)
        except OSError as err:
            raise BadInput(f"cannot write {args.output}: {err.strerror}") from None
    else:
        stdout.write(text)
    verdict = Verdict.combine(r.verdict for r in results)
    return verdict.exit_code
