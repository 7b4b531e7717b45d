"""All-gather context parallelism: how long `prove` of each llama3 target takes (issue #47: under
10 s), beside striped's `prove` run right after it in the same script, and their ratio.

    python benchmarks/allgather_prove.py [TARGET ...] [--repeat K]

Each run is a fresh process (`prove TARGET --quiet`), measured as benchmarks/varlen_prove.py
measures (CPU seconds of the child, and wall seconds); the median of K runs is printed per target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from varlen_prove import timed  # noqa: E402

TARGETS = ("llama3", "llama3-varlen")
PEER = "striped"
LIMIT = 10.0          # seconds, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", default=TARGETS)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'target':16} {'CPU s':>7} {'wall s':>7} {'peer CPU':>9} {'ratio':>6}  under {LIMIT:g} s"
          f"   (peer: prove {PEER}; {os.cpu_count()} cores)")
    for target in args.targets:
        runs = []
        for _ in range(args.repeat):
            cpu, wall = timed(target)
            peer, _ = timed(PEER)
            runs.append((cpu, wall, peer, cpu / peer))
        cpu, wall, peer, ratio = (statistics.median(x) for x in zip(*runs))
        print(f"{target:16} {cpu:7.2f} {wall:7.2f} {peer:9.2f} {ratio:6.2f}  {'yes' if wall < LIMIT else 'NO'}")


if __name__ == "__main__":
    main()
