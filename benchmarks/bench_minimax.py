"""MINIMAX benchmark: solver times and heuristic ratios, against baselines measured in this run.

Baselines: the per-patch binary formulation (x[p, q] in {0, 1}) for the exact solver, the
aggregated model with explicit load-ordering of twin clusters (`sym` columns), and round-robin for
heuristic speed.
Run: python benchmarks/bench_minimax.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from ringproof.model.device.instances import generate
from ringproof.proofs.balance.minimax import solve
from ringproof.model.device.batch import HEURISTICS


def per_patch_milp(problem, time_limit: float) -> tuple[float, bool]:
    """Baseline: one binary per (patch, cluster). Returns (seconds, proven)."""
    n, m = problem.patches, problem.clusters
    c = problem.costs
    nv = n * m + 1
    rows, cols, vals = [], [], []
    for p in range(n):
        rows += [p] * m
        cols += list(range(p * m, (p + 1) * m))
        vals += [1] * m
    for q in range(m):
        rows += [n + q] * (n + 1)
        cols += [p * m + q for p in range(n)] + [nv - 1]
        vals += [int(c[p, q]) for p in range(n)] + [-1]
    lo = [1] * n + [-np.inf] * m
    hi = [1] * n + [0] * m
    obj = np.zeros(nv)
    obj[-1] = 1
    ub = np.ones(nv)
    ub[-1] = np.inf
    start = time.perf_counter()
    res = milp(obj, integrality=np.ones(nv), bounds=Bounds(np.zeros(nv), ub),
               constraints=LinearConstraint(coo_matrix((vals, (rows, cols)), shape=(n + m, nv)), lo, hi),
               options={"time_limit": time_limit, "mip_rel_gap": 0.0})
    return time.perf_counter() - start, res.status == 0


def timed(fn, repeat: int = 5):
    """Median seconds over `repeat` runs and the last result."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


SEEDS = 20


def main() -> None:
    print("== benchmark instance: N=384 patches, 4 banks (ring), Q=32 clusters, skew 0.7, overlap 0.1 ==")
    print(f"{'seed':>4} {'opt':>6} {'proven':>6} {'exact s':>8} {'sym s':>8} {'quick s':>8} {'quick gap':>9}"
          f" {'greedy ms':>9} {'RR ms':>6} " + " ".join(f"{n + '/opt':>12}" for n in HEURISTICS))
    worst = {"exact": 0.0, "quick": 0.0, "gap": 0.0, "greedy_ms": 0.0, "greedy_ratio": 0.0}
    for seed in range(SEEDS):
        problem = generate(384, 4, 32, 0.7, 0.1, seed)
        problem.costs  # build the cost table once, outside every timing
        t_exact, best = timed(lambda: solve(problem))
        t_sym, _ = timed(lambda: solve(problem, symmetry=True))
        t_quick, quick = timed(lambda: solve(problem, time_limit=0.9))
        t_greedy, g = timed(lambda: HEURISTICS["greedy"](problem), repeat=20)
        t_rr, _ = timed(lambda: HEURISTICS["RR"](problem), repeat=20)
        ratios = {n: float(problem.makespan(f(problem)) / best.makespan) for n, f in HEURISTICS.items()}
        print(f"{seed:>4} {float(best.makespan):>6g} {str(best.proven):>6} {t_exact:>8.3f} {t_sym:>8.3f} "
              f"{t_quick:>8.3f} {quick.gap:>9.2%} {t_greedy * 1e3:>9.2f} {t_rr * 1e3:>6.2f} "
              + " ".join(f"{ratios[n]:>12.3f}" for n in HEURISTICS))
        assert best.proven
        worst["exact"] = max(worst["exact"], t_exact)
        worst["quick"] = max(worst["quick"], t_quick)
        worst["gap"] = max(worst["gap"], quick.gap)
        worst["greedy_ms"] = max(worst["greedy_ms"], t_greedy * 1e3)
        worst["greedy_ratio"] = max(worst["greedy_ratio"], ratios["greedy"])
    print(f"worst: proven optimal in {worst['exact']:.3f} s (target < 2 s); quick mode {worst['quick']:.3f} s "
          f"at gap {worst['gap']:.2%} (target < 1 s, <= 5 %); greedy {worst['greedy_ms']:.2f} ms at "
          f"{worst['greedy_ratio']:.3f} x opt (target < 10 ms, <= 1.15)")

    problem = generate(384, 4, 32, 0.7, 0.1, 0)
    t_patch, proven = per_patch_milp(problem, time_limit=20.0)
    t_agg, _ = timed(lambda: solve(problem), repeat=3)
    print(f"baseline per-patch binaries (12288 x_pq): {t_patch:.2f} s, proven={proven} (limit 20 s); "
          f"aggregated {t_agg:.3f} s -> {t_patch / t_agg:.0f}x faster")

    print("\n== sweep Q <= 16, N <= 1536 (all must be proven optimal in < 2 s) ==")
    print(f"{'N':>5} {'Q':>3} {'skew':>5} {'overlap':>7} {'opt':>7} {'exact s':>8} {'sym s':>8} {'greedy/opt':>10}")
    slowest = 0.0
    for n in (384, 768, 1536):
        for q in (4, 8, 16):
            for skew, overlap in ((0.4, 0.2), (0.7, 0.1), (0.9, 0.3)):
                problem = generate(n, 4, q, skew, overlap, 1)
                problem.costs
                t_exact, best = timed(lambda: solve(problem), repeat=1)
                t_sym, _ = timed(lambda: solve(problem, symmetry=True), repeat=1)
                g = float(problem.makespan(HEURISTICS["greedy"](problem)) / best.makespan)
                print(f"{n:>5} {q:>3} {skew:>5} {overlap:>7} {float(best.makespan):>7g} {t_exact:>8.3f} "
                      f"{t_sym:>8.3f} {g:>10.3f}" + ("" if best.proven else "  NOT PROVEN"))
                slowest = max(slowest, t_exact if best.proven else float("inf"))
    print(f"slowest proven optimum in the sweep: {slowest:.3f} s")


if __name__ == "__main__":
    main()
