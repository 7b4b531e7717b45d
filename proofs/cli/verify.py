"""`prove TARGET`: verify every property of a schedule and print property · phase · verdict · tier."""

from __future__ import annotations

import inspect
from dataclasses import replace

from ringproof.model.ring.limits import check_traceable
from ringproof.proofs.cli.common import (ArgumentParser, Exit, Progress, bounded_int, output_dir, seconds,
                                         subcommand_help, write_json)
from ringproof.proofs.options import DEFAULTS, Options
from ringproof.proofs.results import DEFAULT_PROPERTIES, PROPERTIES, TIERS, Verdict
from ringproof.proofs.cli.targets import machine, registry, resolve, table
from ringproof.schedules.dsl import check_size, where
from ringproof.errors import BadInput

EPILOG = """exit codes: 0 every property proved, 1 a property refuted, 2 a verdict unknown
(timeout, solver unknown, or a formula the normalization does not handle), 64 bad input,
70 internal error, 130 interrupted (Ctrl-C). A refutation prints the counterexample and the `prove simulate` command that replays it.
`prove --version` prints the version; `python -m ringproof` and `ringproof` are this same command."""


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove", epilog=EPILOG)
    p.later(lambda: "Prove a ring schedule of self-attention correct for every n with m | n, or show a "
            "counterexample.\n\n" + subcommand_help())
    p.later(lambda: f"{', '.join(sorted(registry()))}; packed sequences: "
            f"{', '.join(n for n, t in table().items() if t.machine != 'ring')}; or the path of a schedule file (.py)",
            p.add_argument("target", help="a registered schedule or the path of a schedule file (.py)"))
    add_solver_options(p)
    p.add_argument("--method", choices=("index", "bitlevel"), default="index",
                   help="index: the index-formula proofs (default); bitlevel: check the run for one "
                   "(-n, -m) on the paper's Boolean ring model (SAT) and its cycle-by-cycle checker")
    p.add_argument("-n", type=int, help="with --method bitlevel or --tier bounded: check this one "
                   "size only: number of vectors")
    p.add_argument("-m", type=int, help="with --method bitlevel or --tier bounded: number of PEs")
    p.add_argument("-d", type=int, help="with --tier bounded and -n, -m: the head dimension (default n)")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.add_argument("--lengths", action="append", metavar="L1,L2,...",
                   help="a varlen target with --tier bounded and -m: check this packing (document lengths; repeatable)")
    return p


def add_solver_options(p: ArgumentParser) -> None:
    """The options of `prove TARGET` that `prove report` shares."""
    p.add_argument("--property", action="append", default=None, metavar="NAME",
                   help=f"check only this property (repeatable): {', '.join(PROPERTIES)}; "
                        f"default: {', '.join(DEFAULT_PROPERTIES)} (a figure row, "
                        f"{', '.join(p for p in PROPERTIES if p not in DEFAULT_PROPERTIES)}, when named)")
    p.add_argument("--tier", default=DEFAULTS.tier, choices=TIERS,
                   help="parametric: all n, m; per-m: all n for each m ≤ --max-m; bounded: n ≤ --max-n")
    p.add_argument("--max-n", type=int, default=DEFAULTS.max_n,
                   help=f"bounded tier: largest n (default {DEFAULTS.max_n})")
    p.add_argument("--max-m", type=int, default=DEFAULTS.max_m,
                   help=f"per-m tier: largest m (default {DEFAULTS.max_m})")
    p.add_argument("--timeout", type=seconds, default=DEFAULTS.timeout,
                   help=f"seconds per solver query (default {DEFAULTS.timeout:g})")
    p.add_argument("--seed", type=bounded_int(0, 2**32 - 1, "a seed"), default=DEFAULTS.seed, help="Z3 random seed")
    p.add_argument("--jobs", type=bounded_int(0, 256, "a number of processes"), default=DEFAULTS.jobs,
                   help="worker processes (default: one per core)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--cross-check", choices=("cvc5",),
                   help="ask cvc5 every query Z3 answered unsat; a disagreement makes the verdict unknown")
    p.add_argument("--cross-timeout", type=seconds, default=DEFAULTS.cross_timeout,
                   help=f"with --cross-check: seconds per query for the second solver (default {DEFAULTS.cross_timeout:g})")
    p.add_argument("--smt2", metavar="DIR", help="write every solver query there as a standalone SMT-LIB 2 file")
    p.add_argument("--idle-pes", action="store_true",
                   help="also derive the cycles of the machine in which a PE with nothing to do in a ring step "
                        "does not hold the others back (each ring step lasts as its busiest PE's active ops)")
    p.add_argument("--exact-peak", action="store_true",
                   help="also derive the exact memory peak where the schedule marks it long to derive "
                        "(the causal forwards and backwards, algo2; docs/performance.md has their CPU figures); "
                        "other schedules with stay hints derive theirs anyway")


def solver_options(args) -> Options:
    """Options from the shared arguments, each checked (bad input: one line, exit 64)."""
    for name in ("max_n", "max_m"):
        if getattr(args, name) < 1:
            raise BadInput(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.tier == "bounded":
        check_traceable(args.max_n, "--max-n")
    if args.cross_check == "cvc5":
        try:
            import cvc5  # noqa: F401
        except ImportError:
            raise BadInput("--cross-check cvc5 needs the cvc5 package (pip install cvc5)") from None
    if args.smt2:
        output_dir(args.smt2, "--smt2")
    props = tuple(p for arg in (args.property or list(DEFAULTS.properties)) for p in arg.split(","))
    return Options(props, args.tier, args.max_n, args.max_m, args.timeout, args.seed, args.jobs,
                   args.cross_check, args.cross_timeout, args.smt2, idle_pes=args.idle_pes,
                   exact_peak=args.exact_peak)


def main(argv, stdout, stderr) -> int:
    if {"-h", "--help"} & set(argv):
        about = target_help([a for a in argv if not a.startswith("-")][:1])
        if about:
            stdout.write(about + "\n")
    args = parser().parse(argv, stdout)
    if args is None:
        return Exit.OK
    opts = solver_options(args)
    from ringproof.schedules.documents import Varlen
    schedule = resolve(args.target)
    if machine(args.target) == "allgather":        # the all-gather machine: proofs/allgather
        from ringproof.proofs.cli import allgather as gathered
        return gathered.prove(args, opts, schedule, stdout)
    if isinstance(schedule, Varlen):               # packed sequences on the ring: proofs/varlen
        from ringproof.proofs.cli import varlen as packed
        return packed.prove(args, opts, schedule, stdout, stderr)
    from ringproof.schedules.allgather import AllGather
    if isinstance(schedule, AllGather):            # a schedule file's all-gather schedule
        from ringproof.proofs.cli import allgather as gathered
        return gathered.prove(args, opts, schedule, stdout)
    if args.lengths:
        raise BadInput(f"--lengths names a packing of a varlen target, not of {args.target[:60]!r}")
    if args.method == "bitlevel":
        return _bitlevel(args, schedule, stdout)
    size = None
    if args.n is not None or args.m is not None or args.d is not None:
        if args.tier != "bounded" or args.n is None or args.m is None:
            raise BadInput("-n and -m name one size for --method bitlevel or --tier bounded; the "
                           "index proofs cover all sizes (use --max-n / --max-m to bound them)")
        check_size(args.n, args.m, args.d)
        check_traceable(args.n)
        size = (args.n, args.m) if args.d is None else (args.n, args.m, args.d)
    look = list(schedule.notes.look)
    if look and not args.json:      # a derived schedule: where else to look, before any proof
        stdout.write("derived schedule; witnesses that rest on what changed:\n"
                     + "".join(f"  {line}\n" for line in look) + "\n")
    from ringproof.proofs.ring.prover import verify_with_conditions   # heavy (z3, sympy): not for --help
    from ringproof.proofs.ring.session import Session

    with Progress(stderr, not (args.json or args.quiet)) as progress:   # this process's one session
        results, needed = verify_with_conditions(schedule, replace(opts, size=size, progress=progress),
                                                 Session(opts.budget))
    warn_disagreements(args.target, results, stderr)
    verdict = Verdict.combine(r.verdict for r in results)
    if args.json:
        write_json("prove", {"target": args.target, "schedule": schedule.name,
                                "verdict": verdict.value, "look": look,
                                "results": [r.to_json() for r in results],
                                "conditions": [{"condition": c["condition"], "counterexample":
                                                c["counterexample"].to_json() if c["counterexample"] else None}
                                               for c in needed]}, stdout)
    else:
        print_table(args.target, schedule, results, stdout)
        print_cross_check(results, stdout)
        print_conditions(needed, stdout)
        if schedule.derived:
            stdout.write("derived: " + "; ".join(f"{k} = {v}" for k, v in readable_derivations(schedule).items()) + "\n")
    return verdict.exit_code


def readable_derivations(schedule) -> dict:
    """{name: definition} of the derived sizes as a reader writes them (`⌊n/(2·m)⌋`), read through
    sympy; a definition sympy cannot give (a `Least`: its condition) stays in the prover's syntax."""
    import sympy

    from ringproof.proofs.report.maths import text
    from ringproof.schedules.shape import Least

    P = schedule.shape.record(lambda name: sympy.Symbol(name, integer=True, positive=True))
    out = dict(schedule.derivations())
    for name, fn in dict(schedule.derived).items():
        if not isinstance(fn, Least):
            try:
                out[name] = text(str(fn(P)))
            except Exception:         # a user's definition sympy cannot evaluate: kept as rendered
                pass
    return out


def readable_iteration(it: dict) -> str:
    """One iteration of a counterexample for people: `a: phase1 at i=1, j=2, l=1`, a term as
    `the term (1, 3, 2)`; the JSON keeps the solver's rows (role, phase, indices, key1, ...)."""
    role = it.get("role")
    keys = [v for k, v in it.items() if k.startswith("key") and k[3:].isdigit()]
    if keys and "phase" not in it:
        return f"the term ({', '.join(map(str, keys))})" + (f" ({role})" if role not in (None, "key") else "")
    rest = ", ".join(f"{k}={v}" for k, v in it.items() if k not in ("role", "phase"))
    where = f"{it['phase']} at {rest}" if "phase" in it else rest
    return f"{role}: {where}" if role else where


def target_help(names) -> str:
    """`prove TARGET --help`: what a registered TARGET is (its description, sizes and side
    condition), printed above the options; "" for no target, a file or an unknown name."""
    if not names:
        return ""
    name = names[0]
    from ringproof.schedules.allgather import ALLGATHER
    from ringproof.schedules.documents import varlen

    v = varlen(name)
    if v is not None:
        return (f"{name}: {v.doc}" + (" (the backward pass)" if v.backward else "")
                + f".\nProved for every m, every number of documents and every lengths vector with {v.requires_text}; "
                "--tier bounded --lengths L1,L2,... -m M checks one packing.\n")
    if name in ALLGATHER:
        return f"{name}: {ALLGATHER[name].doc}.\n"
    from ringproof.proofs.cli.targets import registry

    schedule = registry().get(name)
    if schedule is None:
        return ""
    sizes = "n and d, with m | n and m | d" if schedule.shape.is_free("d") else "n (d = n), with m | n"
    side = schedule.requirement()
    return (f"{name}: {schedule.doc}.\nProved for every {sizes}" + (f" and {side}" if side else "")
            + f"; its phases: {', '.join(p.name for p in schedule.phases)}.\n")


def print_cross_check(results, out) -> None:
    """With --cross-check: how many of Z3's unsat answers the second solver re-checked, and how it
    answered (the JSON's `solver.cross_check` per result)."""
    checks = [r.solver["cross_check"] for r in results if r.solver.get("cross_check")]
    if not checks:
        return
    asked = sum(c["z3_unsat"] for c in checks)
    answers: dict = {}
    for c in checks:
        for answer, count in c["answers"].items():
            answers[answer] = answers.get(answer, 0) + count
    agreed = answers.get("unsat", 0)
    rest = ", ".join(f"{n} {a}" for a, n in sorted(answers.items()) if a != "unsat")
    out.write(f"\ncross-check: {checks[0]['solver']} {checks[0]['version']} re-checked {asked} of Z3's unsat answers: "
              + ("it agreed on every one" if agreed == asked else f"it agreed on {agreed}; {rest} (those verdicts are unknown)")
              + "\n")


def warn_disagreements(target: str, results, stderr) -> None:
    """A second solver that contradicts Z3 is said loudly on stderr (the verdict is already unknown)."""
    for r in results:
        if r.solver.get("disagreements"):
            stderr.write(f"prove: warning: {target} {r.property}/{r.phase}: {r.reason}\n")


def _bitlevel(args, schedule, out) -> int:
    """Bounded check of one (n, m) on the bit-level machine: the independent checker and SAT."""
    from ringproof.model.bitlevel import check_run
    from ringproof.proofs.search.sat_check import sat_check_run
    from ringproof.model.bitlevel.bridge import to_run

    if args.n is None or args.m is None:
        raise BadInput("--method bitlevel needs -n and -m")
    if args.tier != "bounded":
        raise BadInput("--method bitlevel checks one size: use it with --tier bounded")
    check_size(args.n, args.m)
    from ringproof.model.bitlevel.types import VARIANTS
    from ringproof.proofs.search.limits import check_run_size

    if schedule.problem.name in VARIANTS:
        check_run_size(schedule.problem.name, args.n, args.m)      # before the run is built
    run = to_run(schedule, args.n, args.m)
    check_run_size(run.variant, run.n, run.m, run.d, run.T)       # with its own cycles
    violations = check_run(run)
    sat = sat_check_run(run, timeout=args.timeout)
    reason = sat.reason
    if sat.valid is None:
        verdict = Verdict.UNKNOWN
        reason = reason or (f"no SAT answer within --timeout {args.timeout:g} s: raise --timeout "
                            "(this size may need minutes)")
    else:
        verdict = Verdict.PROVED if sat.valid and not violations else Verdict.REFUTED
        if sat.valid != (not violations):      # the two methods disagree: say so, claim nothing
            verdict = Verdict.UNKNOWN
    data = {"target": args.target, "method": "bitlevel", "tier": "bounded", "n": args.n, "m": args.m,
            "verdict": verdict.value, "cycles": run.T, "ops": len(run.ops), "sends": len(run.sends),
            "checker_violations": violations, "sat": sat.verdict.value, "seconds": round(sat.seconds, 4),
            "variables": sat.variables, "clauses": sat.clauses, "solver": sat.solver, "reason": reason}
    if args.json:
        write_json("bitlevel", data, out)
    else:
        out.write(f"{schedule.name}, n={args.n}, m={args.m}, bit-level machine: {verdict.value}\n")
        out.write(f"  run: {run.T} cycles, {len(run.ops)} ops, {len(run.sends)} sends\n")
        out.write(f"  SAT encoding ({sat.solver}): {sat.verdict.value} in {sat.seconds:.2f} s, "
                  f"{sat.variables} variables, {sat.clauses} clauses" + (f"; {reason}" if reason else "") + "\n")
        out.write(f"  cycle-by-cycle checker: {'valid' if not violations else 'invalid'}\n")
        for v in violations[:5]:
            out.write(f"    {v}\n")
    return verdict.exit_code


def print_conditions(needed, out) -> None:
    """The size conditions every verdict assumes, with a failure without each."""
    from ringproof.proofs.ring.conditions import MAX_SIZE

    out.write("\nassumed: " + ", ".join(c["condition"] for c in needed) + "\n")
    for c in needed:
        cex = c["counterexample"]
        if cex is None:
            out.write(f"  without {c.get('written', c['condition'])}: no failure found up to size {MAX_SIZE}\n")
        else:
            out.write(f"  without {c.get('written', c['condition'])}: {cex.check} fails at {cex.sizes()} ({cex.message})\n")


def print_table(target, schedule, results, out) -> None:
    rows = [("property", "phase", "verdict", "tier", "seconds")]
    rows += [(r.property, r.phase, r.verdict.value, r.tier, f"{r.seconds:.2f}") for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for i, row in enumerate(rows):
        out.write("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")
        if i == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")
    for r in results:
        if r.verdict is Verdict.PROVED:
            continue
        cex = r.counterexample
        at = f" at {cex.sizes()}" if cex is not None else ""
        out.write(f"\n{_where(schedule, r.phase)}{r.verdict.value} {r.property}/{r.phase}{at}: {r.reason}\n")
        if cex is None:
            continue
        out.write(f"  counterexample: {cex.sizes()}: {cex.message}\n")
        for it in cex.iterations:
            out.write("    " + readable_iteration(it) + "\n")
        for v in cex.replay.get("ring_violations", [])[:3]:
            out.write(f"  ring model: {v}\n")
        err = cex.replay.get("max_rel_error")
        if err is not None:
            from ringproof.model.ring.numerics import describe_difference
            diff = cex.replay.get("first_difference")
            out.write(f"  ring model: max relative error vs numpy = {err:.3g}"
                      + (f"; first wrong entry {describe_difference(diff)}" if diff else "") + "\n")
        if cex.replay.get("witness_only") and r.property == "placement":
            out.write(f"  the schedule computes the right values at n={cex.n}, m={cex.m} (the ring "
                      f"model's run is valid and matches numpy), but not on the PEs `placement` declares\n")
        elif cex.replay.get("witness_only"):
            out.write(f"  the schedule computes the right result at n={cex.n}, m={cex.m} (the ring "
                      f"model's run is valid and y matches numpy): only a witness is wrong, the one "
                      f"checked by “{cex.check}”\n")
        ring = cex.replay.get("ring_counts")
        if ring is not None:
            out.write(f"  ring model at {cex.sizes()}: {cex.replay['count']} = {cex.replay['measured']} ("
                      + ", ".join(f"{k} {v}" for k, v in ring.items()) + ")\n")
        out.write(f"  replay: {cex.command(target, r.property)}\n")
        out.write(f"  run: {cex.command(target)}\n")
    print_figures(results, out)


def print_figures(results, out) -> None:
    """The figures' lines under the table: the counts and, from the counts' details or their own
    rows, the balance and the memory peak, each form in signs a reader knows, not sympy's."""
    from ringproof.proofs.report.maths import load_lines, text_parts

    rows = {r.property: r.details for r in results if r.property in ("counts", "balance", "memory")}
    details = rows.get("counts", {})
    c = details.get("readable")
    if c:
        out.write(f"\ncycles = {text_parts(c['cycles'])}; ops = "
                  + ", ".join(f"{k}: {text_parts(v)}" for k, v in c["ops"].items() if v not in ("not derived", "0"))
                  + f"; utilization = {text_parts(c['utilization'])}\n")
    balance, memory = ((details.get("balance"), details.get("memory")) if "counts" in rows
                       else (rows.get("balance"), rows.get("memory")))
    if (balance or memory) and not c:
        out.write("\n")
    for line in load_lines(balance, memory):
        out.write(line + "\n")


def _where(schedule, phase: str) -> str:
    """`file:line: ` of a phase's step function ("" for results about no single phase)."""
    if phase not in [p.name for p in schedule.phases]:
        return ""
    step = schedule.phase(phase).step
    return f"{where(inspect.unwrap(step))}: "
