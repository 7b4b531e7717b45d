"""Benchmark of the Algorithm 3 proofs: prints figures beside the paper's SAT times (Table II).

    python benchmarks/bench_algo3.py [--quick]

Figures: every solver property at tier parametric on 5 Z3 seeds (with the verdict counts: the
phases over the row groups stay `unknown` until the normalization handles n div 2); tier per-m,
m ≤ 6, once; the bounded sweep n ≤ 24; one instance n = 17, m = 17 against the paper's 8.35 s.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter


from ringproof.model.ring.trace import build_trace  # noqa: E402
from ringproof.proofs.ring.bounded import check_sizes, check_trace  # noqa: E402
from ringproof.schedules.shape import divisible as sizes  # noqa: E402
from ringproof.proofs.ring.prover import Options, verify  # noqa: E402
from ringproof.proofs.results import DEFAULT_PROPERTIES  # noqa: E402
from ringproof.schedules.algo3 import ALGO3  # noqa: E402

PAPER_SAT_17_17 = 8.35   # seconds, Yu & Fujita Table II (Algo.3 run time, n = 17, m = 17)
SOLVER = tuple(p for p in DEFAULT_PROPERTIES if p != "counts")


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0


def tally(rs) -> str:
    c = Counter(r.verdict.value for r in rs)
    return ", ".join(f"{v} {c[v]}" for v in ("proved", "unknown", "refuted"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one seed, no per-m run")
    args = ap.parse_args()
    seeds = [0] if args.quick else [0, 1, 2, 3, 4]

    verify(ALGO3, Options(properties=("well-formed",), max_n=4))      # warm imports and workers
    times = []
    for seed in seeds:
        rs, secs = timed(lambda: verify(ALGO3, Options(seed=seed, properties=SOLVER, max_n=16)))
        times.append(secs)
        print(f"parametric, solver properties, seed {seed}: {secs:.2f} s ({tally(rs)}; "
              "unknowns include their bounded search n ≤ 16)")
    print(f"parametric: best {min(times):.2f} s, worst {max(times):.2f} s")

    if not args.quick:
        rs, secs = timed(lambda: verify(ALGO3, Options(tier="per-m", max_m=6, properties=SOLVER,
                                                       max_n=16)))
        print(f"per-m, m ≤ 6: {secs:.2f} s ({tally(rs)})")

    _, t_sweep = timed(lambda: check_sizes(ALGO3, 24))
    print(f"bounded sweep, every property, all (n, m) with m | n, n ≤ 24 ({len(sizes(24))} sizes): "
          f"{t_sweep:.2f} s")

    best = min(timed(lambda: check_trace(build_trace(ALGO3, 17, 17)))[1] for _ in range(5))
    print(f"one instance n = 17, m = 17, every property: {best * 1000:.1f} ms (target < 200 ms); "
          f"paper's SAT check: {PAPER_SAT_17_17} s, ratio {PAPER_SAT_17_17 / best:.0f}×")


if __name__ == "__main__":
    from ringproof.proofs.ring.heap import keep_freed_memory

    keep_freed_memory()      # as `prove` does for its own process (the sweeps' figures depend on it)
    main()
