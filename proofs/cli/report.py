"""`prove report [TARGETS...] --out DIR`: verify and write report.md, report.html and report.json;
`prove report TARGET --format md|html|json [-o FILE]`: one target, one format."""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import replace
from pathlib import Path

from ringproof.errors import BadInput
from ringproof.proofs.cli.argparsing import ArgumentParser
from ringproof.proofs.cli.verify import add_solver_options, solver_options, warn_disagreements
from ringproof.proofs.cli.targets import printed_defects, registry, resolve
from ringproof.proofs.report import collect
from ringproof.proofs.report.render import RENDER
from ringproof.proofs.results import Verdict
from ringproof.model.ring.limits import check_traceable
from ringproof.schedules.dsl import check_size

EPILOG = """With no TARGET: every registered algorithm and its printed variant. --out DIR writes
report.md, report.html (one file, no network) and report.json (docs/report.schema.json).
exit codes: as `prove TARGET` (0 proved, 1 refuted, 2 unknown, 64 bad input)."""


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove report", description="Verify schedules and write a report beside "
                       "the paper: verdicts, what each proof rested on, counterexamples with their "
                       "replay, counts against the paper's claims, Tables I and II, pictures.", epilog=EPILOG)
    p.add_argument("targets", nargs="*", metavar="TARGET")
    p.add_argument("--out", metavar="DIR", help="write report.md, report.html and report.json there")
    p.add_argument("--format", choices=sorted(RENDER), default="md", help="without --out: one format")
    p.add_argument("-o", "--output", help="without --out: the file to write (default: standard output)")
    add_solver_options(p)
    p.add_argument("--front", choices=("auto", "yes", "no"), default="auto",
                   help="Tables I, II, ES minima, fair readings (auto: with --out)")
    p.add_argument("-n", type=int, default=4, help="size of the schedule picture (default 4)")
    p.add_argument("-m", type=int, default=2, help="PEs of the schedule picture (default 2)")
    p.add_argument("--cycles", type=int, default=6, help="cycles shown per phase in the picture (default 6)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def main(argv, stdout, stderr) -> int:
    from ringproof.proofs.ring.prover import verify
    from ringproof.proofs.ring.session import Session

    args = parser().parse(argv, stdout)
    if args is None:
        return 0
    opts = solver_options(args)
    check_size(args.n, args.m)
    check_traceable(args.n)
    if args.cycles < 1:
        raise BadInput(f"--cycles must be at least 1, got {args.cycles}")
    names = args.targets or list(registry())
    if not args.out and len(names) != 1:
        raise BadInput("several targets need --out DIR (one report of all of them)")
    schedules = [(name, resolve(name)) for name in names]
    progress = _Progress(stderr, len(schedules), on=not args.quiet)
    sections = []
    session = Session.for_budget(opts.budget)     # one session for every target and the front
    for name, schedule in schedules:
        progress.start(name)
        results = verify(schedule, replace(opts, smt2_dir=str(Path(args.smt2) / schedule.name))
                         if args.smt2 else opts, session)
        sections.append(collect.target(name, schedule, results, opts, (args.n, args.m), args.cycles,
                                       printed_defects(name)))
        progress.done(name, sections[-1]["verdict"])
        warn_disagreements(name, results, stderr)
    front = None
    if args.front == "yes" or (args.front == "auto" and args.out):
        from ringproof.proofs.report.front import front as build_front

        progress.start("front section (Tables I, II, ES, fair readings)")
        front = build_front(session)
        progress.done("front section", "")
    doc = {"schema": "ringproof-report", "schema_version": collect.SCHEMA_VERSION,
           "generated": {"command": "prove report " + shlex.join(argv), "versions": collect.versions(args.cross_check),
                         "options": {"tier": opts.tier, "timeout": opts.timeout, "seed": opts.seed,
                                     "properties": list(opts.properties), "max_n": opts.max_n, "max_m": opts.max_m}},
           "front": front, "targets": sections}
    verdict = Verdict.combine(Verdict(t["verdict"]) for t in sections)
    files = _write(doc, args, stdout)
    if args.json and files:
        json.dump({"schema_version": collect.SCHEMA_VERSION, "verdict": verdict.value, "files": files,
                   "targets": [{"target": t["target"], "verdict": t["verdict"]} for t in sections]},
                  stdout, indent=2, allow_nan=False)
        stdout.write("\n")
    return verdict.exit_code


def _write(doc: dict, args, stdout) -> list[str]:
    outputs = [(Path(args.out) / f"report.{fmt}", fmt) for fmt in ("md", "html", "json")] if args.out \
        else [(Path(args.output), args.format)] if args.output else []
    if not outputs:                  # standard output: the document (--json: as JSON)
        stdout.write(RENDER["json" if args.json else args.format](doc))
        return []
    for path, fmt in outputs:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(RENDER[fmt](doc))
        except OSError as err:
            raise BadInput(f"cannot write {path}: {err.strerror}") from None
    return [str(p) for p, _ in outputs]


class _Progress:
    """One line per step on stderr, only when stderr is a terminal (and `on`: not --quiet)."""

    def __init__(self, stream, total: int, on: bool = True):
        self.stream, self.total, self.i = stream, total, 0
        self.on = on and hasattr(stream, "isatty") and stream.isatty()
        self.t0 = time.perf_counter()

    def start(self, what: str):
        self.i += 1
        if self.on:
            self.stream.write(f"[{min(self.i, self.total)}/{self.total}] {what} ...")
            self.stream.flush()
            self.t1 = time.perf_counter()

    def done(self, what: str, verdict: str):
        if self.on:
            self.stream.write(f" {verdict} ({time.perf_counter() - self.t1:.1f} s, "
                              f"{time.perf_counter() - self.t0:.0f} s in all)\n")
            self.stream.flush()

