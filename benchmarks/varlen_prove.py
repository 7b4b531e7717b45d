"""Packed sequences: how long `prove` of each varlen target takes, as a ratio to the single-sequence
zigzag's `prove` run right after it (issue #46: at most 3 times it).

    python benchmarks/varlen_prove.py [TARGET ...] [--repeat K]

Each run is a fresh process (`prove TARGET --quiet`); its CPU seconds (user + system of the child,
which a loaded machine changes less than wall seconds) and wall seconds are measured, the peer's
right after; the median of K ratios is printed per target.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

TARGETS = ("ring-attention-varlen", "zigzag-varlen", "zigzag-varlen-padded", "ring-attention-varlen-bwd",
           "zigzag-varlen-bwd")
PEER = "zigzag"


def timed(target: str) -> tuple[float, float]:
    """(CPU, wall) seconds of one `prove TARGET --quiet` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ringproof", target, "--quiet"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"prove {target} exited {done.returncode}: {done.stderr.strip()[:200]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def table(targets, peer: str, repeat: int, limit: float | None = None) -> None:
    """A line per target: median CPU and wall seconds over `repeat` runs, the peer's CPU seconds
    (run right after each) and the median ratio; with `limit`, whether the wall is under it."""
    print(f"{'target':28} {'CPU s':>7} {'wall s':>7} {'peer CPU':>9} {'ratio':>6}"
          + (f"  under {limit:g} s" if limit else "") + f"   (peer: prove {peer}; {os.cpu_count()} cores)")
    for target in targets:
        runs = []
        for _ in range(repeat):
            cpu, wall = timed(target)
            other, _ = timed(peer)
            runs.append((cpu, wall, other, cpu / other))
        cpu, wall, other, ratio = (statistics.median(x) for x in zip(*runs))
        print(f"{target:28} {cpu:7.2f} {wall:7.2f} {other:9.2f} {ratio:6.2f}"
              + (f"  {'yes' if wall < limit else 'NO'}" if limit else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", default=TARGETS)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    table(args.targets, PEER, args.repeat)


if __name__ == "__main__":
    main()
