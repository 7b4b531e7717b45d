"""Cube-and-conquer figures (docs/bitlevel.md §7): prints one line per measurement.

    python benchmarks/bench_cubes.py masked5 [--depth K] [--workers W] [--solver S] [--timeout S]
    python benchmarks/bench_cubes.py speedup [--n N] [--depth K] [--cap S]   (e.g. --n 3 --depth 2)
    python benchmarks/bench_cubes.py project6 [--depth K] [--cap S] [--workers W]
    python benchmarks/bench_cubes.py free [--timeout S]

masked5: masked n=5, global barriers, the whole search (target: minimum 37 proven in < 300 s).
speedup: every cube of one masked horizon (no early stop), solved by 1 worker, then 2, in one run.
project6: every cube of masked n=6 at its lemma bound T=51 with a cap per cube; median, tail, and
the cores that would decide them all within an hour (a lower bound when a cube hits the cap).
free: barrier-free minima of masked n=3 and 4 (target: each within 60 s).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

from ringproof.model.bitlevel.problem import Problem
from ringproof.proofs.search.cubes import cubes
from ringproof.proofs.search.engine import DaskEngine, InProcess
from ringproof.proofs.search.minimum import _Query, search, solve_cube


def _capped(query: _Query, cube, cap: float):
    """One cube with `cap` seconds from when it starts (a task)."""
    return solve_cube(query, cube, time.time() + cap)


def _cube_times(n: int, depth: int, cap: float, workers: int, solver: str):
    """[(cube name, verdict, seconds)] for every cube of masked n at its lemma bound."""
    prob = Problem("masked", n, n)
    mins = prob.phase_minimum()
    T = sum(mins)
    query = _Query("masked", n, n, n, None, "global", solver, mins)
    todo = cubes(prob, T, depth)
    runner = InProcess() if workers == 1 else DaskEngine(workers)
    out = []
    try:
        start = time.perf_counter()
        for k, (verdict, _, calls) in runner.imap(_capped, [(query, c, cap) for c in todo]):
            out.append((todo[k].name, verdict.value, sum(a.seconds for a in calls)))
        wall = time.perf_counter() - start
    finally:
        runner.close()
    return T, out, wall


def masked5(args) -> None:
    r = search("masked", 5, 5, timeout=args.timeout, depth=args.depth, workers=args.workers, solver=args.solver)
    print(f"masked n=5 global depth={args.depth} workers={args.workers} solver={args.solver}: "
          f"min={r.min_cycles} proven={r.proven} T={r.unsat_below} by {r.unsat_by}; {r.seconds:.1f} s; "
          f"cubes {r.cubes_done}/{r.cubes}; {len(r.attempts)} solver calls")


def speedup(args) -> None:
    walls = {}
    for workers in (1, 2):
        T, times, walls[workers] = _cube_times(args.n, args.depth, args.cap, workers, args.solver)
        print(f"masked n={args.n} T={T}: {len(times)} cubes, {workers} worker(s): wall {walls[workers]:.1f} s; "
              + ", ".join(f"{v} {s:.1f}s" for _, v, s in times), flush=True)
    print(f"speed-up of 2 workers over 1: {walls[1] / walls[2]:.2f}x")


def project6(args) -> None:
    T, times, wall = _cube_times(6, args.depth, args.cap, args.workers, args.solver)
    secs = sorted(s for _, _, s in times)
    capped = sum(1 for _, v, _ in times if v == "unknown")
    for name, v, s in times:
        print(f"  {name}: {v} {s:.1f} s", flush=True)
    tail = secs[max(0, math.ceil(0.9 * len(secs)) - 1)]
    total = sum(secs)
    bound = ">=" if capped else ""
    print(f"masked n=6 T={T}: {len(times)} cubes (depth {args.depth}), wall {wall:.0f} s on {args.workers} "
          f"workers; per cube median {statistics.median(secs):.0f} s, 90% tail {tail:.0f} s, max {secs[-1]:.0f} s; "
          f"{capped} hit the {args.cap:.0f} s cap; all cubes: {bound}{total:.0f} core-s = "
          f"{bound}{math.ceil(total / 3600)} cores for an hour")


def free(args) -> None:
    for n in (3, 4):
        r = search("masked", n, n, barriers="none", timeout=args.timeout)
        print(f"masked n={n} no barriers: min={r.min_cycles} proven={r.proven} (T={r.unsat_below} by "
              f"{r.unsat_by}); best {r.best_sat}; {r.seconds:.1f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("masked5", "speedup", "project6", "free"))
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--solver", default="kissat404")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--cap", type=float, default=300.0, help="seconds per cube (speedup, project6)")
    ap.add_argument("--n", type=int, default=3, help="masked n of speedup (default 3)")
    args = ap.parse_args()
    {"masked5": masked5, "speedup": speedup, "project6": project6, "free": free}[args.what](args)


if __name__ == "__main__":
    main()
