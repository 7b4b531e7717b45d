"""`prove report` of Algorithms 1-3 and their printed variants: seconds with a cold and a warm lemma
cache, against the verification alone (`prove TARGET` for the six targets) in the same run.

    python benchmarks/bench_report.py [--jobs N] [--front]

Targets (2 cores): < 60 s cold, < 20 s warm. Each figure is one fresh process (`prove ...`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

TARGETS = ["algo1", "algo1-printed", "algo2", "algo2-printed", "algo3", "algo3-printed"]


def timed(argv: list[str], cache: str) -> float:
    env = dict(os.environ, RINGPROOF_CACHE=cache)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ringproof.proofs.cli.main", *argv], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--front", action="store_true", help="include the front section (Tables I, II, ...)")
    args = ap.parse_args()
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        report = ["report", *TARGETS, "--out", out, "--front", "yes" if args.front else "no", *jobs]
        cold = timed(report, cache)
        warm = timed(report, cache)
        verify = sum(timed([t, *jobs], cache) for t in TARGETS)
    print(f"prove report (6 targets), cold lemma cache  {cold:7.1f} s   target < 60 s: "
          f"{'met' if cold < 60 else 'NOT met'}")
    print(f"prove report (6 targets), warm lemma cache  {warm:7.1f} s   target < 20 s: "
          f"{'met' if warm < 20 else 'NOT met'}")
    print(f"prove TARGET × 6, warm (baseline)           {verify:7.1f} s")
    print(f"report / baseline (warm)                    {warm / verify:7.2f}")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nrow for docs/report.md:\n| {time.strftime('%Y-%m-%d %H:%M')} | {load} | {cold:.0f} s | "
          f"{warm:.0f} s | {verify:.0f} s |")


if __name__ == "__main__":
    main()
