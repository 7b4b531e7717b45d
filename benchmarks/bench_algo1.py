"""Benchmark of the Algorithm 1 proofs: prints figures and ratios against baselines in the same run.

    python benchmarks/bench_algo1.py [--quick]

Figures: the lemma library cold and cached; every property at tier parametric on 5 Z3 seeds;
a raw-Z3 baseline (the same injectivity query without normalization); the bounded sweep n ≤ 64;
one instance n = 15, m = 5 against the paper's SAT check of it (27.38 s, Table I).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # test-only helpers

import z3  # noqa: E402

from helpers.backend_z3 import Z3  # noqa: E402
from ringproof.proofs.ring import lemmas  # noqa: E402
from ringproof.proofs.ring.bounded import check_sizes, check_trace  # noqa: E402
from ringproof.proofs.figures.counting import check_claim, counts  # noqa: E402
from ringproof.proofs.ring.prover import Options, verify  # noqa: E402
from ringproof.proofs.results import Verdict  # noqa: E402
from ringproof.model.ring.trace import build_trace  # noqa: E402
from ringproof.schedules.algo1 import ALGO1, CLAIMS  # noqa: E402
from ringproof.schedules.expr import extra_backend  # noqa: E402

PAPER_SAT_15_5 = 27.38   # seconds, Yu & Fujita Table I (Algo.1 run time, n = 15, m = 5)


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0


def raw_injectivity(timeout_s: float) -> tuple[str, float]:
    """Phase-1 injectivity with %, / on symbolic m and n = k·m, no normalization."""
    m, k = z3.Ints("m k")
    n = k * m
    v = {x: z3.Ints(f"{x}1 {x}2") for x in "hijl"}
    P = SimpleNamespace(n=n, m=m, k=k, d=n, kd=k)     # d = n: kd = k (no division of Z3 terms)
    from ringproof.schedules.algo1 import _column, phase1_B

    def key(t):
        h, i, j, l = (v[x][t] for x in "hijl")
        return h, phase1_B(P, l, j, i), _column(P, l, j, i)

    s = z3.Solver()
    s.set("timeout", int(timeout_s * 1000))
    s.add(m >= 1, k >= 1)
    for t in (0, 1):
        h, i, j, l = (v[x][t] for x in "hijl")
        s.add(1 <= h, h <= n, 1 <= i, i <= k, 1 <= j, j <= n, 1 <= l, l <= m)
    s.add(z3.Or(*[v[x][0] != v[x][1] for x in "hijl"]))
    with extra_backend(Z3):
        pairs = list(zip(key(0), key(1)))
    for a, b in pairs:
        s.add(a == b)
    r, secs = timed(s.check)
    return str(r), secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one seed, sweep to n = 32")
    args = ap.parse_args()
    seeds = [0] if args.quick else [0, 1, 2, 3, 4]
    max_n = 32 if args.quick else 64

    with tempfile.TemporaryDirectory() as d:
        os.environ["RINGPROOF_CACHE"] = d
        cold, t_cold = timed(lambda: lemmas.prove_library())
        warm, t_warm = timed(lambda: lemmas.prove_library())
    print(f"lemma library: {len(cold)} lemmas, cold {t_cold:.2f} s (target < 30), "
          f"cached {t_warm:.3f} s, all proved: {all(r.proved for r in cold)}")

    verify(ALGO1, Options(properties=("well-formed",)))          # warm imports and workers
    times = []
    for seed in seeds:
        rs, secs = timed(lambda: verify(ALGO1, Options(seed=seed)))
        ok = all(r.verdict is Verdict.PROVED for r in rs)
        times.append(secs)
        print(f"parametric, all properties, seed {seed}: {secs:.2f} s, "
              f"{len(rs)} results, all proved: {ok}")
    best = min(times)
    print(f"parametric total: best {best:.2f} s, worst {max(times):.2f} s (target < 5 s on 2 cores)")

    raw, t_raw = raw_injectivity(10.0)
    inj = [r for r in verify(ALGO1, Options(properties=("coverage",))) if r.phase == "phase1"][0]
    print(f"baseline raw Z3, phase-1 injectivity without normalization: {raw} after {t_raw:.2f} s; "
          f"normalized coverage of phase 1 (3 queries): {inj.verdict.value} in {inj.seconds:.2f} s")

    _, t_sweep = timed(lambda: check_sizes(ALGO1, max_n))
    from ringproof.schedules.shape import divisible as sizes
    print(f"bounded sweep, every property, all (n, m) with m | n, n ≤ {max_n} "
          f"({len(sizes(max_n))} sizes): {t_sweep:.2f} s (target < 10 s)")

    _, t_one = timed(lambda: check_trace(build_trace(ALGO1, 15, 5)))
    print(f"one instance n = 15, m = 5, every property: {t_one * 1000:.1f} ms "
          f"(target < 100 ms); paper's SAT check: {PAPER_SAT_15_5} s, ratio {PAPER_SAT_15_5 / t_one:.0f}×")

    c = counts(ALGO1)
    print(f"cycles = {c.cycles} (derived); claim {CLAIMS['cycles']}: "
          f"{'proved equal' if check_claim(c.cycles, CLAIMS['cycles']) is None else 'REFUTED'}; "
          f"n=15, m=5 -> {c.at(15, 5)['cycles']} (Table I: 1440)")


if __name__ == "__main__":
    from ringproof.proofs.ring.heap import keep_freed_memory

    keep_freed_memory()      # as `prove` does for its own process (the sweeps' figures depend on it)
    main()
