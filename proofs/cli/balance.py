"""`prove balance`: every batch schedule of the Intel paper against the proven MINIMAX optimum."""

from __future__ import annotations

from fractions import Fraction

from ringproof.model.device.instances import TOPOLOGIES, generate, load
from ringproof.proofs.cli.common import ArgumentParser, Exit, Progress, positive_int, seconds, write_json
from ringproof.model.device.batch import HEURISTICS, evaluate_assignment
from ringproof.errors import BadInput

EPILOG = """exit codes:
  0   the optimum is proven (best makespan equals the lower bound)
  2   time limit hit before the optimum was proven; the best assignment and its gap to the
      certified lower bound are still printed
  64  bad input (negative sizes, proportions not summing to 1, a cluster near no bank, ...)

ratio = schedule makespan / best makespan found (the optimum when proven).
utilization = sum over patches of their local execution time / (clusters x makespan)."""


# What an instance takes while it is generated, solved and scheduled by every heuristic, measured
# (peak RSS over patches 10,000-100,000, banks 4-16, clusters 32-256): bytes per patch, per patch
# and bank (its row of shares), per patch and cluster (the heuristics' costs); the least of each,
# so that an instance refused would not have fitted in the ring simulator's budget either.
PER_PATCH, PER_PATCH_BANK, PER_PATCH_CLUSTER = 2000, 100, 16


def check_instance(patches: int, banks: int, clusters: int) -> None:
    """Refuse, before it is built, an instance whose records exceed the models' memory budget."""
    from ringproof.model.ring.limits import RECORDS

    need = patches * (PER_PATCH + PER_PATCH_BANK * banks + PER_PATCH_CLUSTER * clusters)
    if need > RECORDS:
        most = RECORDS // (PER_PATCH + PER_PATCH_BANK * banks + PER_PATCH_CLUSTER * clusters)
        raise BadInput(f"--patches {patches:,} on {banks} banks and {clusters} clusters is too large: the "
                       f"instance and its schedules take about {need / 2**30:,.1f} GiB, and are limited to "
                       f"{RECORDS / 2**30:.1f} GiB (here at most {most:,} patches)")


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove balance", epilog=EPILOG,
                       description="Schedule patches (tensor slices) on compute clusters near memory "
                                   "banks: RR, CBMF, load balancing, weighted, greedy vs the MINIMAX optimum.")
    p.add_argument("file", nargs="?", help="instance file (.json or .csv); overrides --patches/--skew/--overlap")
    p.add_argument("--patches", type=positive_int, default=384, help="number of patches N (default 384)")
    p.add_argument("--banks", type=positive_int, default=4, help="memory banks B (default 4)")
    p.add_argument("--clusters", type=positive_int, default=32,
                   help="compute clusters Q, split evenly over banks (default 32)")
    p.add_argument("--skew", type=float, default=0.7, help="share of patches mainly on bank 0 (default 0.7)")
    p.add_argument("--overlap", type=float, default=0.1, help="share of patches straddling two banks (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="picks straddling patches and breaks CBMF ties (default 0)")
    p.add_argument("--topology", choices=TOPOLOGIES, default="ring", help="bank topology (default ring)")
    p.add_argument("--base", type=Fraction, default=Fraction(1), help="latency to the near bank (default 1)")
    p.add_argument("--per-hop", type=Fraction, default=Fraction(1), help="extra latency per hop (default 1)")
    p.add_argument("--timeout", "--time-limit", dest="timeout", type=seconds, default=None,
                   help="seconds for the exact solver (default none; --time-limit is the old name)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    return p


def main(argv: list[str], stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return Exit.OK
    for name in ("skew", "overlap"):
        value = getattr(args, name)
        if not 0 <= value <= 1:
            raise BadInput(f"--{name} must lie in [0, 1], got --{name}={value}")
    device = {"topology": args.topology, "base": args.base, "per_hop": args.per_hop}
    if args.file:
        problem = load(args.file, banks=None, clusters=args.clusters, seed=args.seed, **device)
        check_instance(problem.patches, problem.banks, problem.clusters)
    else:
        check_instance(args.patches, args.banks, args.clusters)
        problem = generate(args.patches, args.banks, args.clusters, args.skew, args.overlap, args.seed, **device)
    from ringproof.proofs.balance.minimax import solve   # heavy (z3): not for --help

    with Progress(stderr, not (args.json or args.quiet)) as progress:
        progress(f"balancing {problem.patches} patches on {problem.clusters} clusters: the MINIMAX optimum")
        best = solve(problem, time_limit=args.timeout)
    schedules = {name: evaluate_assignment(problem, name, make(problem)) for name, make in HEURISTICS.items()}

    def ratio(span: Fraction) -> float:
        return float(span / best.makespan) if best.makespan else 1.0

    if args.json:
        write_json("balance", {
            "instance": {"patches": problem.patches, "banks": problem.banks, "clusters": problem.clusters,
                         "topology": args.topology, "seed": args.seed,
                         **({"file": args.file} if args.file else {"skew": args.skew, "overlap": args.overlap})},
            "optimum": {"makespan": float(best.makespan), "lower_bound": float(best.lower_bound),
                        "proven": best.proven, "seconds": round(best.seconds, 4),
                        "certified_bound": float(best.certified_bound), "gap": best.gap, "status": best.status,
                        "utilization": problem.utilization(best.assignment)},
            "schedules": {name: {"makespan": float(s.makespan), "ratio": ratio(s.makespan),
                                 "utilization": s.utilization} for name, s in schedules.items()},
        }, stdout)
    else:
        where = f"file {args.file}" if args.file else f"skew {args.skew}, overlap {args.overlap}, seed {args.seed}"
        stdout.write(f"instance: {problem.patches} patches, {problem.banks} banks ({args.topology}), "
                     f"{problem.clusters} clusters; {where}\n")
        verdict = "proven optimal" if best.proven else f"NOT proven ({best.status}), gap {best.gap:.2%}"
        stdout.write(f"optimum: makespan {float(best.makespan):g}, lower bound {float(best.lower_bound):g}, "
                     f"{verdict}, {best.seconds:.3f} s\n\n")
        stdout.write(f"{'schedule':<10} {'makespan':>10} {'utilization':>12} {'ratio':>7}\n")
        rows = [("optimum" if best.proven else "best", best.makespan, problem.utilization(best.assignment))]
        rows += [(name, s.makespan, s.utilization) for name, s in schedules.items()]
        for name, span, util in rows:
            stdout.write(f"{name:<10} {float(span):>10g} {util:>12.3f} {ratio(span):>7.3f}\n")
    return Exit.OK if best.proven else Exit.UNKNOWN
