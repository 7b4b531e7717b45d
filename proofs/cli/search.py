"""`prove search VARIANT -n N -m M`: minimum cycles of one attention variant on the bit-level ring.

Exit codes: 0 minimum found and proven (T satisfiable, T-1 unsatisfiable), 2 timeout or solver
unknown (the best schedule found and the largest T proven impossible are reported, no minimum is
claimed), 64 bad input.
"""

from __future__ import annotations

import os

from ringproof.model.bitlevel import Run
from ringproof.model.bitlevel.types import BARRIERS, VARIANTS
from ringproof.errors import BadInput
from ringproof.proofs.cli.common import ArgumentParser, Exit, Progress, positive_int, seconds, write_json
from ringproof.proofs.search.options import CLI_DEFAULTS, SearchOptions
from ringproof.proofs.search.portfolio import SOLVERS

def parser() -> ArgumentParser:
    p = ArgumentParser(prog="prove search", description=__doc__.split("\n\n")[0],
                       epilog="exit codes: 0 minimum proven, 2 timeout/unknown, 64 bad input")
    p.add_argument("variant", choices=VARIANTS)
    p.add_argument("-n", type=positive_int, required=True, help="number of vectors")
    p.add_argument("-m", type=positive_int, required=True, help="number of PEs")
    p.add_argument("-d", type=positive_int, default=None, help="vector length (default n)")
    p.add_argument("--timeout", type=seconds, default=CLI_DEFAULTS.timeout,
                   help=f"seconds for the whole search (default {CLI_DEFAULTS.timeout:g})")
    p.add_argument("--max-T", type=int, default=CLI_DEFAULTS.max_T, help="give up above this many cycles")
    p.add_argument("--solver", default=CLI_DEFAULTS.solver, choices=SOLVERS, metavar="SOLVER",
                   help="portfolio (Kissat and CaDiCaL raced), a pysat solver name, or z3")
    p.add_argument("--no-lemmas", action="store_true",
                   help="start at the slot-counting bound: the solver refutes what lemma L2b would")
    p.add_argument("--barriers", choices=BARRIERS, default="global",
                   help="phases separated everywhere (global, default), on each PE (pe), or not at all (none)")
    p.add_argument("--cube-depth", type=int, default=CLI_DEFAULTS.depth,
                   help="split each T into m^K cubes by the PEs of K decisive ops (default 0: one cube)")
    p.add_argument("--workers", type=positive_int, default=CLI_DEFAULTS.workers,
                   help="local worker processes for the cubes (default: the machine's cores)")
    p.add_argument("--width", type=positive_int, default=CLI_DEFAULTS.width, metavar="P",
                   help="solver processes one cube runs at once (default: the cores shared by the local "
                        "workers; 1 on a cluster)")
    p.add_argument("--cluster", default=CLI_DEFAULTS.cluster, metavar="ADDRESS",
                   help="run the cubes on the Dask scheduler at ADDRESS (e.g. tcp://host:8786)")
    p.add_argument("--state", default=CLI_DEFAULTS.state, metavar="FILE",
                   help="record finished cubes in FILE and resume from it")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    return p


def _progress(progress: Progress):
    """Per solver call and per cube, one line that stays (on a terminal; nothing otherwise)."""
    if not progress.on:
        return None, None

    def call(a):
        split = "" if a.split is None else f" split {a.split[0]}/{a.split[1]}/{a.split[2]}"
        progress.line(f"  T={a.T}{split} {a.stage}: {a.verdict.value} in {a.seconds:.1f} s")

    def cube(c, verdict, secs, done, total):
        progress.line(f"cube {c.name}: {verdict.value} in {secs:.1f} s ({done}/{total} cubes done)")

    return call, cube


def _cell(run: Run, p: int, t: int, ops: dict, sends: dict) -> str:
    op = ops.get((p, t))
    text = "." if op is None else f"{op.kind}({op.i},{op.j}{'' if op.l is None else f',{op.l}'})"
    s = sends.get((p, t))
    return text + (f">{s[0]}({','.join(map(str, s[1:]))})" if s else "")


def schedule_table(run: Run) -> str:
    """The schedule as a cycle-by-PE grid: op of each (p, t), '>datum' for what p sends during t."""
    ops = {(o.p, o.t): o for o in run.ops}
    sends = {(s.p, s.t): s.datum for s in run.sends}
    rows = [[str(t)] + [_cell(run, p, t, ops, sends) for p in range(run.m)] for t in range(run.T)]
    head = ["t"] + [f"PE{p + 1}" for p in range(run.m)]       # PEs 1..m, as the prover prints them
    width = [max(len(r[c]) for r in rows + [head]) for c in range(len(head))]
    fmt = lambda r: "  ".join(x.ljust(w) for x, w in zip(r, width)).rstrip()  # noqa: E731
    return "\n".join([fmt(head)] + [fmt(r) for r in rows])


def _check_state(state: str | None) -> None:
    """--state names a file that can be read and written, checked before any search runs."""
    if state is None:
        return
    from pathlib import Path

    path = Path(state)
    if path.is_dir():
        raise BadInput(f"search: --state {state!r} is a directory; name a file (it records finished cubes)")
    if not path.parent.is_dir():
        raise BadInput(f"search: --state {state!r}: no directory {str(path.parent)!r}")
    if path.exists() and not os.access(path, os.R_OK | os.W_OK) or not os.access(path.parent, os.W_OK):
        raise BadInput(f"search: --state {state!r} cannot be written")


def main(argv, stdout, stderr) -> int:
    args = parser().parse(argv, stdout)
    if args is None:
        return Exit.OK
    if args.n % args.m:
        raise BadInput(f"search: m must divide n (the ring schedules and the lower bounds assume "
                       f"m | n), got n={args.n}, m={args.m}")
    _check_state(args.state)
    from ringproof.proofs.search.limits import check_search

    check_search(args.variant, args.n, args.m, args.d)
    from ringproof.proofs.search.minimum import search   # heavy (SAT solvers): not for --help

    with Progress(stderr, not (args.json or args.quiet)) as progress:
        call, cube = _progress(progress)
        options = SearchOptions(max_T=args.max_T, timeout=args.timeout, solver=args.solver,
                                lemmas=not args.no_lemmas, depth=args.cube_depth, workers=args.workers,
                                cluster=args.cluster, state=args.state, width=args.width, progress=call,
                                on_cube=cube)
        r = search(args.variant, args.n, args.m, args.d, barriers=args.barriers, options=options)
    if args.json:
        doc = {
            "variant": r.variant, "n": r.n, "m": r.m, "d": r.d, "proven": r.proven,
            "min_cycles": r.min_cycles, "unsat_below": r.unsat_below, "unsat_seconds": r.unsat_seconds,
            "unsat_by": r.unsat_by, "lemma_below": r.lemma_below,
            "best_sat": r.best_sat, "lower_bound": r.lower_bound, "seconds": round(r.seconds, 3),
            "solver": args.solver, "reason": r.reason, "barriers": r.barriers, "cubes": r.cubes,
            "cubes_done": r.cubes_done,
            "attempts": [{"T": a.T, "split": None if a.split is None else list(a.split), "stage": a.stage,
                          "verdict": a.verdict.value, "seconds": round(a.seconds, 3), "variables": a.variables,
                          "clauses": a.clauses}
                         for a in r.attempts],
            "schedule": None if r.schedule is None else r.schedule.to_json(),
        }
        write_json("search", doc, stdout, indent=None)
    else:
        name = f"{r.variant} attention, n={r.n}, d={r.d}, m={r.m}, {r.barriers} barriers"
        if r.proven:
            print(f"{name}: minimum {r.min_cycles} cycles (proven)", file=stdout)
        else:
            best = "none found" if r.best_sat is None else f"{r.best_sat} cycles"
            print(f"{name}: minimum NOT proven ({r.reason}); best schedule: {best}", file=stdout)
        how = {"SAT solver": f"SAT solver, {r.unsat_seconds:.2f} s",
               "lemma L2b": "lemmas L1, L2b, L3, no solver call needed",
               "lemma L5": "lemma L5 (row chain), no solver call needed"}.get(
            r.unsat_by, "slot counting (L1, L2a, L3), no solver call needed" if r.barriers == "global" else
            "slot counting (L1'), no solver call needed")
        print(f"  T={r.unsat_below} unsatisfiable ({how}); lemma bound {r.lower_bound}; "
              f"total {r.seconds:.2f} s", file=stdout)
        if r.schedule is not None:
            print(schedule_table(r.schedule), file=stdout)
    return Exit.OK if r.proven else Exit.UNKNOWN
