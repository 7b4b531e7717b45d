"""Cube-and-conquer figures (docs/bitlevel.md §7): prints one line per measurement.

    python benchmarks/bench_cubes.py masked5 [--depth K] [--workers W] [--solver S] [--timeout S]
    python benchmarks/bench_cubes.py speedup [--n N] [--T T] [--depth K] [--cap S]   (e.g. --n 4 --T 27 --depth 2)
    python benchmarks/bench_cubes.py project6 [--depth K] [--cap S] [--workers W] [--T T] [--sample K] [--width P]
    python benchmarks/bench_cubes.py free [--timeout S]
    python benchmarks/bench_cubes.py phases [--sample K] [--cap S]

masked5: masked n=5, global barriers, the whole search (target: minimum 37 proven in < 300 s).
speedup: every cube of one masked horizon (no early stop), solved by 1 worker, then 2, in one run;
    each cube runs one solver process at a time, so 1 worker uses one core and 2 workers two.
project6: a random sample of the cubes of masked n=6 at T (default its lemma bound 51), each with a
cap; measured median and tail per cube (each cube's solver calls printed), extrapolated to the
cores that would decide every cube within an hour (a lower bound when a cube hits the cap).
free: barrier-free minima of masked n=3 and 4 (target: each within 60 s).
phases: where masked n=5's witness search spends its time (split 15/7/15 of T=37): the phase-1
relaxation (CaDiCaL) and its first K placements; for each, phases 1-2 with phase 1 pinned,
and the full CNF with phase 1 pinned (Kissat, capped), two at a time.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time

from ringproof.model.bitlevel.problem import BitProblem
from ringproof.proofs.search.cubes import cubes
from ringproof.proofs.search.engine import DaskEngine, InProcess
from ringproof.proofs.search.minimum import _Query, search, solve_cube


def _capped(query: _Query, cube, cap: float):
    """One cube with `cap` seconds from when it starts (a task): (verdict, seconds it took, its solver
    calls as "stage split: verdict seconds")."""
    start = time.perf_counter()
    verdict, _, attempts = solve_cube(query, cube, time.time() + cap)
    calls = [f"{a.stage} {'/'.join(map(str, a.split or ()))}: {a.verdict.value} {a.seconds:.0f}s" for a in attempts]
    return verdict, time.perf_counter() - start, calls


def _cube_times(n: int, T: int | None, depth: int, cap: float, workers: int, solver: str, sample: int = 0,
                seed: int = 0, width: int = 1):
    """(T, cubes of T, [(cube name, verdict, seconds)] of every cube or of a random sample, wall) for
    masked n at T (default its lemma bound), each cube capped at `cap` seconds and running at most
    `width` solver processes at once (one core per cube by default, so workers = cores in use)."""
    prob = BitProblem("masked", n, n)
    mins = prob.phase_minimum()
    T = T or sum(mins)
    query = _Query("masked", n, n, n, None, "global", solver, mins, width)
    todo = cubes(prob, T, depth)
    run = random.Random(seed).sample(todo, sample) if 0 < sample < len(todo) else todo
    runner = InProcess() if workers == 1 else DaskEngine(workers)
    out = []
    try:
        start = time.perf_counter()
        for k, (verdict, secs, calls) in runner.imap(_capped, [(query, c, cap) for c in run]):
            out.append((run[k].name, verdict.value, secs))
            print(f"  {run[k].name}: {verdict.value} in {secs:.1f} s ({'; '.join(calls)})", flush=True)
        wall = time.perf_counter() - start
    finally:
        runner.close()
    return T, len(todo), out, wall


def masked5(args) -> None:
    r = search("masked", 5, 5, timeout=args.timeout, depth=args.depth, workers=args.workers, solver=args.solver)
    print(f"masked n=5 global depth={args.depth} workers={args.workers} solver={args.solver}: "
          f"min={r.min_cycles} proven={r.proven} T={r.unsat_below} by {r.unsat_by}; {r.seconds:.1f} s; "
          f"cubes {r.cubes_done}/{r.cubes}; {len(r.attempts)} solver calls; load average {os.getloadavg()[0]:.1f}")


def speedup(args) -> None:
    walls = {}
    for workers in (1, 2):
        T, _, times, walls[workers] = _cube_times(args.n, args.T, args.depth, args.cap, workers, args.solver)
        print(f"masked n={args.n} T={T}: {len(times)} cubes, {workers} worker(s): wall {walls[workers]:.1f} s; "
              + ", ".join(f"{v} {s:.1f}s" for _, v, s in times), flush=True)
    print(f"speed-up of 2 workers over 1: {walls[1] / walls[2]:.2f}x (load average {os.getloadavg()[0]:.1f})")


def project6(args) -> None:
    """Measured: a random sample of the cubes of masked n=6 at T, each capped. Extrapolated: the
    sample's mean per cube times the number of cubes and the cores a cube holds (width), as core-seconds
    and cores for an hour (a lower bound when a cube hit the cap, as its time is then only known to
    exceed the cap)."""
    T, n_cubes, times, wall = _cube_times(6, args.T, args.depth, args.cap, args.workers, args.solver, args.sample,
                                          args.seed, args.width)
    secs = sorted(s for _, _, s in times)
    capped = sum(1 for _, v, _ in times if v == "unknown")
    tail = secs[max(0, math.ceil(0.9 * len(secs)) - 1)]
    ge = ">=" if capped else ""
    total = statistics.mean(secs) * n_cubes * args.width   # a cube holds `width` cores while it runs
    print(f"measured: masked n=6 T={T}, {len(times)} of {n_cubes} cubes (depth {args.depth}, seed {args.seed}), "
          f"{args.workers} workers of width {args.width}, cap {args.cap:.0f} s, wall {wall:.0f} s, load average "
          f"{os.getloadavg()[0]:.1f}: {len(times) - capped} decided, {capped} at the cap; per cube median "
          f"{ge}{statistics.median(secs):.0f} s, 90% tail {ge}{tail:.0f} s, max {ge}{secs[-1]:.0f} s")
    print(f"extrapolated: all {n_cubes} cubes {ge}{total:.0f} core-s = {ge}{math.ceil(total / 3600)} cores for an "
          f"hour (sample mean x cubes x width)")


def free(args) -> None:
    for n in (3, 4):
        r = search("masked", n, n, barriers="none", timeout=args.timeout)
        print(f"masked n={n} no barriers: min={r.min_cycles} proven={r.proven} (T={r.unsat_below} by "
              f"{r.unsat_by}); best {r.best_sat}; {r.seconds:.1f} s; load average {os.getloadavg()[0]:.1f}",
              flush=True)


def phases(args) -> None:
    from multiprocessing.pool import ThreadPool

    from ringproof.proofs.search.cnf import Encoding, EncodingModes
    from ringproof.proofs.search.portfolio import models, solve

    prob = BitProblem("masked", 5, 5)
    split = prob.phase_minimum()
    L1, L2, _ = split
    relax = Encoding(prob.phase_one(), L1, EncodingModes(split=(L1, 0, 0)))
    cnf = relax.cnf
    _, found, secs = models(cnf.clauses, cnf.nv, relax.blocking, max(1, args.sample), "cadical195")
    pins = [relax.decode(model)[0] for model in found]
    print(f"phase-1 relaxation (CaDiCaL): {len(pins)} placements in {secs:.1f} s", flush=True)

    def pinned(job):
        k, (prob_k, T, split_k), pin = job
        enc = Encoding(prob_k, T, EncodingModes(split=split_k, pin=pin))
        verdict, _, secs = solve(enc.cnf.clauses, enc.cnf.nv, "kissat404", args.cap)
        return k, enc.cnf.nv, verdict.value, secs

    for name, what in (("phases 1-2, phase 1 pinned", (prob.up_to(2), L1 + L2, (L1, L2, 0))),
                       ("full, phase 1 pinned", (prob, sum(split), split))):
        with ThreadPool(2) as pool:
            for k, nv, verdict, secs in pool.imap(pinned, [(k, what, pin) for k, pin in enumerate(pins)]):
                print(f"{name}: placement {k + 1} ({nv} variables): {verdict} in {secs:.1f} s", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("masked5", "speedup", "project6", "free", "phases"))
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--solver", default="kissat404")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--cap", type=float, default=300.0, help="seconds per cube (speedup, project6)")
    ap.add_argument("--n", type=int, default=3, help="masked n of speedup (default 3)")
    ap.add_argument("--T", type=int, default=None,
                    help="horizon of project6 and speedup (default the lemma bound: 51 for n=6)")
    ap.add_argument("--sample", type=int, default=0,
                    help="cubes of project6 run, chosen at random (0: all); placements of phases (0: one)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--width", type=int, default=1,
                    help="solver processes per cube (project6; --solver portfolio --width 2 races Kissat and CaDiCaL)")
    args = ap.parse_args()
    {"masked5": masked5, "speedup": speedup, "project6": project6, "free": free, "phases": phases}[args.what](args)


if __name__ == "__main__":
    main()
