"""`prove report [TARGETS...] --out DIR`: verify and write the report beside the paper. It writes
report.md, report.html, report.json (and report.pdf with Chromium); `prove report TARGET --format
md|html|json|pdf [-o FILE]`: one target, one format."""

from __future__ import annotations

import shlex
import time
from dataclasses import replace
from pathlib import Path

from ringproof.errors import BadInput
from ringproof.proofs import jsonout
from ringproof.proofs.cli.common import ArgumentParser, Exit, Progress, output_dir, output_file, write_json
from ringproof.proofs.cli.verify import add_solver_options, solver_options, warn_disagreements
from ringproof.proofs.cli.targets import printed_defects, resolve, table
from ringproof.proofs.report import collect, pdf
from ringproof.proofs.report.render import RENDER
from ringproof.proofs.results import Verdict
from ringproof.model.ring.limits import check_traceable
from ringproof.schedules.dsl import Schedule, check_size

EPILOG = """With no TARGET: every registered target (`prove --help` lists them), the packed-sequence
ones (varlen on the ring, all-gather) included: their sections give the sums over the documents
and the smallest packing that breaks without the side condition. --out DIR writes report.md,
report.html (one file, no network), report.json (docs/report.schema.json) and, when Chromium is
installed, report.pdf; the output paths are checked before any proof runs, and the command ends
with one line naming the files and each target's verdict (a printed variant's refutation is
marked expected).
exit codes: 0 every target proved, or refuted only where that is expected (a printed variant of the
paper); 1 a refutation not expected; 2 a verdict unknown; 64 bad input; 70 internal error;
130 interrupted."""
FORMATS = sorted(RENDER) + ["pdf"]


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove report", description="Verify schedules and write a report beside "
                       "the paper: verdicts, what each proof rested on,\ncounterexamples with their "
                       "replay, counts against the paper's claims, Tables I and II, pictures.", epilog=EPILOG)
    p.add_argument("targets", nargs="*", metavar="TARGET",
                   help="a registered target (`prove --help` lists them) or a schedule file (.py); "
                        "none: every registered target")
    p.add_argument("--out", metavar="DIR", help="write report.md, report.html, report.json (and report.pdf) there")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="without --out: one format (default: -o FILE's extension, else md; pdf: printed "
                        "by headless Chromium, needs -o FILE)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="without --out: the file to write, its format from its extension (.md, .html, "
                        ".json, .pdf) unless --format says (default: standard output)")
    add_solver_options(p)
    p.add_argument("--front", choices=("auto", "yes", "no"), default="auto",
                   help="Tables I, II, ES minima, fair readings (auto: with --out)")
    p.add_argument("-n", type=int, default=4, help="size of the schedule picture (default 4)")
    p.add_argument("-m", type=int, default=2, help="PEs of the schedule picture (default 2)")
    p.add_argument("--cycles", type=int, default=6, help="cycles shown per phase in the picture (default 6)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return Exit.OK
    opts = solver_options(args)
    check_size(args.n, args.m)
    check_traceable(args.n)
    if args.cycles < 1:
        raise BadInput(f"--cycles must be at least 1, got {args.cycles}")
    names = args.targets or list(table())
    if not args.out and len(names) != 1:
        raise BadInput("several targets need --out DIR (one report of all of them)")
    schedules = [(name, resolve(name)) for name in names]
    packed = next((name for name, s in schedules if not isinstance(s, Schedule)), None)
    if packed is not None and opts.tier != "parametric":
        raise BadInput(f"--tier {opts.tier}: {packed[:60]} is a packed-sequence target, reported at tier parametric "
                       f"(every m, D and lengths vector); one packing: prove {packed[:60]} --tier bounded --lengths L -m M")
    outputs = _outputs(args)             # checked (and --out created) before any proof runs
    from ringproof.proofs.ring.prover import verify_with_conditions   # heavy (z3, sympy): not for --help
    from ringproof.proofs.ring.session import Session

    sections = []
    session = Session(opts.budget)     # one session for every target and the front
    with Progress(stderr, not args.quiet) as progress:
        t0 = time.perf_counter()
        for i, (name, schedule) in enumerate(schedules, 1):
            step = f"[{i}/{len(schedules)}] {name} ..."
            progress(step)
            t1 = time.perf_counter()
            if not isinstance(schedule, Schedule):       # packed sequences: a Varlen or an AllGather
                results, needed = _packed(name, schedule, opts, session)
                sections.append(_packed_section(name, schedule, results, needed, opts, args))
            else:
                results, needed = verify_with_conditions(
                    schedule, replace(opts, smt2_dir=str(Path(args.smt2) / schedule.name)) if args.smt2 else opts,
                    session)
                sections.append(collect.target(name, schedule, results, needed, opts, (args.n, args.m), args.cycles,
                                               printed_defects(name)))
            progress.line(f"{step} {sections[-1]['verdict']} ({time.perf_counter() - t1:.1f} s, "
                          f"{time.perf_counter() - t0:.0f} s in all)")
            warn_disagreements(name, results, stderr)
        front = None
        if args.front == "yes" or (args.front == "auto" and args.out):
            from ringproof.proofs.report.front import front as build_front

            progress("front section (Tables I, II, ES, fair readings) ...")
            front = build_front(session)
    doc = jsonout.document("report", {
        "schema": "ringproof-report",
        "generated": {"command": "prove report " + shlex.join(argv), "versions": collect.versions(args.cross_check),
                      "options": {"tier": opts.tier, "timeout": opts.timeout, "seed": opts.seed,
                                  "properties": list(opts.properties), "max_n": opts.max_n, "max_m": opts.max_m}},
        "front": front, "targets": sections})
    verdict = Verdict.combine(Verdict(t["verdict"]) for t in sections)
    code = exit_code(sections)
    files = _write(doc, args, outputs, stdout, stderr)
    if args.json and files:
        write_json("report", {"verdict": verdict.value, "files": files,
                              "targets": [{"target": t["target"], "verdict": t["verdict"],
                                           "expected": t["expected"]} for t in sections]}, stdout)
    elif files:
        stdout.write(summary_line(files, sections) + "\n")
    return code


def _packed(name: str, record, opts, session):
    """(results, conditions) of a packed-sequence target, as `prove NAME` gives them: a varlen
    one's by `proofs.varlen.verify` (every m, D and lengths vector meeting its side condition),
    an all-gather one's by `proofs.allgather.verify` (a user's formulas run as the user's code)."""
    from ringproof.schedules.documents import Varlen

    if isinstance(record, Varlen):
        from ringproof.proofs.varlen.verify import prove

        results, needed, _ = prove(record, opts, session)
        return [r for r in results if r.property in opts.properties], needed
    from ringproof.proofs.allgather.verify import prove
    from ringproof.proofs.cli.allgather import users_code

    with users_code(record, 300.0):
        results = [r for r in prove(record, smt2_dir=opts.smt2_dir) if r.property in opts.properties
                   or (r.property, r.phase) in {("counts", p) for p in ("balance", "memory") if p in opts.properties}]
    return results, [{"condition": f"{record.requires_text}, Hk | H, s | Hk", "counterexample": None}]


def _packed_section(name: str, record, results, needed, opts, args) -> dict:
    from ringproof.schedules.allgather import AllGather

    if isinstance(record, AllGather):
        from ringproof.proofs.cli.allgather import users_code

        with users_code(record, 120.0):
            return collect.packed(name, record, results, needed, opts, (args.n, args.m), args.cycles)
    return collect.packed(name, record, results, needed, opts, (args.n, args.m), args.cycles)


def _expected(t: dict) -> bool:
    """A target refuted as expected: a printed variant of the paper, whose defects are known."""
    return t["verdict"] == t["expected"] == "refuted"


def exit_code(sections: list[dict]) -> int:
    """As `prove TARGET` over the targets, but a printed variant's expected refutation counts as
    the report succeeding (its refutation is the finding): 0 when the only refutations are those,
    so that `prove report` of every target can run in a user's CI."""
    return Verdict.combine(Verdict.PROVED if _expected(t) else Verdict(t["verdict"]) for t in sections).exit_code


def summary_line(files: list[str], sections: list[dict]) -> str:
    """One line: where the files are, each target's verdict (an expected refutation marked), and,
    where every refutation is an expected one, that the exit code is 0 for them."""
    folder = {str(Path(f).parent) for f in files}
    where = (f"{folder.pop()}/ ({', '.join(Path(f).name for f in files)})" if len(folder) == 1
             else ", ".join(files))
    verdicts = ", ".join(f"{t['target']} {t['verdict']}" + (" (expected)" if _expected(t) else "") for t in sections)
    expected = sum(map(_expected, sections))
    tail = ""
    if expected and exit_code(sections) == Exit.OK:
        which = ("the printed variant refuted as expected" if expected == 1 else
                 f"{expected} printed variants refuted as expected")
        tail = f"; {which} and nothing else refuted, so exit 0"
    return f"report: {where}: {verdicts}{tail}"


SUFFIXES = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json", ".pdf": "pdf"}


def _outputs(args) -> list[tuple[Path, str]]:
    """(path, format) of every file to write, each checked now; [] for standard output."""
    if args.out and (args.output or args.format):
        given = " and ".join(o for o, v in (("-o", args.output), ("--format", args.format)) if v)
        raise BadInput(f"--out DIR writes every format (report.md, .html, .json, .pdf); {given} "
                       "is for one file without --out: give one or the other")
    if args.output and args.format is None:
        suffix = Path(args.output).suffix.lower()
        if suffix not in SUFFIXES:
            raise BadInput(f"-o {args.output!r}: cannot tell the format from {suffix or 'no extension'}; "
                           f"name a .md, .html, .json or .pdf file, or give --format {{{','.join(FORMATS)}}}")
        args.format = SUFFIXES[suffix]
    args.format = args.format or "md"
    if args.out:
        folder = output_dir(args.out, "--out")
        fmts = ["md", "html", "json"] + (["pdf"] if pdf.browser() else [])
        return [(folder / f"report.{fmt}", fmt) for fmt in fmts]
    if args.format == "pdf":
        if not args.output:
            raise BadInput("--format pdf needs -o FILE (a PDF is not written to standard output)")
        if pdf.browser() is None:
            raise BadInput(f"--format pdf: {pdf.MISSING}")
    if args.output:
        return [(output_file(args.output, "-o")[0], args.format)]
    return []


def _write(doc: dict, args, outputs, stdout, stderr) -> list[str]:
    if not outputs:                  # standard output: the document (--json: as JSON)
        stdout.write(RENDER["json" if args.json else args.format](doc))
        return []
    written = []
    for path, fmt in outputs:
        try:
            if fmt == "pdf":
                why = _pdf(doc, path, outputs)
                if why:
                    if args.format == "pdf" and not args.out:
                        raise BadInput(f"--format pdf: {why}")
                    stderr.write(f"prove report: {path.name} not written: {why}\n")
                    continue
            else:
                path.write_text(RENDER[fmt](doc))
        except OSError as err:
            raise BadInput(f"cannot write {path}: {err.strerror}") from None
        written.append(str(path))
    if args.out and not pdf.browser():
        stderr.write(f"prove report: report.pdf not written: {pdf.MISSING}\n")
    return written


def _pdf(doc: dict, path: Path, outputs) -> str | None:
    """Print the HTML (the one just written beside it, or a temporary one) to `path`."""
    html = next((p for p, fmt in outputs if fmt == "html"), None)
    if html is not None:
        return pdf.print_pdf(html, path)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(RENDER["html"](doc))
        return pdf.print_pdf(page, path)
