"""Benchmark of the Algorithm 2 proofs: prints figures and the verdict of every tier.

    python benchmarks/bench_algo2.py [--quick]

Figures: every property (counts included: phase 1's cycle hint is proved per run) at tier
parametric, and every solver property per-m (m ≤ 6), on 5 Z3 seeds; the bounded sweep; one instance n = 15, m = 5 against the paper's SAT check of it (14.45 s,
Table I).
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
from ringproof.schedules.algo2 import ALGO2  # noqa: E402

PAPER_SAT_15_5 = 14.45   # seconds, Yu & Fujita Table I (Algo.2 run time, n = 15, m = 5)
SOLVER_PROPS = tuple(p for p in DEFAULT_PROPERTIES if p != "counts")


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0


def tier(name: str, seeds, props, **kw):
    times = []
    for seed in seeds:
        rs, secs = timed(lambda: verify(ALGO2, Options(properties=props, tier=name, seed=seed, **kw)))
        times.append(secs)
        tally = Counter(r.verdict.value for r in rs)
        print(f"{name}, seed {seed}: {secs:.2f} s, " + ", ".join(f"{v} {c}" for v, c in sorted(tally.items())))
    print(f"{name} total: best {min(times):.2f} s, worst {max(times):.2f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one seed, sweep to n = 24")
    args = ap.parse_args()
    seeds = [0] if args.quick else [0, 1, 2, 3, 4]
    max_n = 24 if args.quick else 48

    verify(ALGO2, Options(properties=("well-formed",), max_n=4))    # warm imports and workers
    tier("parametric", seeds, DEFAULT_PROPERTIES, max_n=16)
    tier("per-m", seeds, SOLVER_PROPS, max_m=6, max_n=16)

    _, t_sweep = timed(lambda: check_sizes(ALGO2, max_n))
    print(f"bounded sweep, every property, all (n, m) with m | n, n ≤ {max_n} "
          f"({len(sizes(max_n))} sizes): {t_sweep:.2f} s")

    tr = build_trace(ALGO2, 15, 5)
    found, t_one = timed(lambda: check_trace(build_trace(ALGO2, 15, 5)))
    ok = not any(found.values())
    print(f"one instance n = 15, m = 5 ({tr.cycles} cycles), every property: {t_one * 1000:.1f} ms, "
          f"all hold: {ok} (target < 100 ms); paper's SAT check: {PAPER_SAT_15_5} s, "
          f"ratio {PAPER_SAT_15_5 / t_one:.0f}×")


if __name__ == "__main__":
    from ringproof.proofs.ring.heap import keep_freed_memory

    keep_freed_memory()      # as `prove` does for its own process (the sweeps' figures depend on it)
    main()
