"""`prove algo3-fast` beside its peer `prove algo3`, measured in the same run (issue #26: under 5 s).

    python benchmarks/bench_algo3_fast.py [--repeat 5] [--against REV]

Each figure is a fresh `prove` process (speed.py's `measure`: median wall seconds of --repeat runs,
peak GiB, exit codes), the whole target and its counts obligation alone (`--property counts`,
where the closed forms, the per-PE balance and the memory line are derived). The runs of algo3-fast
and algo3 alternate, so both see the same load; the ratio is the figure to compare on a busy
machine. --against REV also runs each command on git revision REV, each run right after the same
run here (speed.py's `revision`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed import revision, run, _summary  # noqa: E402

COMMANDS = {"whole target": ["--quiet"], "counts obligation": ["--property", "counts", "--quiet"]}


def figures(repeat: int, against: dict | None) -> list[str]:
    rows = ["| measure | algo3-fast: s | algo3 (peer): s | ratio | exit" + (" | algo3-fast at REV: s" if against else "")
            + " |", "| --- " * (5 + bool(against)) + "|"]
    for what, opts in COMMANDS.items():
        runs: dict = {"fast": [], "peer": [], "then": []}
        for _ in range(repeat):
            runs["fast"].append(run(["algo3-fast", *opts]))
            runs["peer"].append(run(["algo3", *opts]))
            if against is not None:
                runs["then"].append(run(["algo3-fast", *opts], against))
        fast, peer = _summary(runs["fast"], "algo3-fast"), _summary(runs["peer"], "algo3")
        exits = ", ".join(map(str, sorted(set(fast["exit"]) | set(peer["exit"]))))
        then = f" | {_summary(runs['then'], '')['s']:.2f}" if against is not None else ""
        rows.append(f"| {what} (`{' '.join(opts)}`) | {fast['s']:.2f} | {peer['s']:.2f} | "
                    f"{fast['s'] / peer['s']:.2f} | {exits}{then} |")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure (the median is shown)")
    ap.add_argument("--against", metavar="REV", help="also run algo3-fast on git revision REV")
    args = ap.parse_args()
    load0 = os.getloadavg()
    with revision(args.against) if args.against else contextlib.nullcontext() as against:
        rows = figures(args.repeat, against)
    print("\n".join(rows).replace("REV", args.against or "REV"))
    print("load average (1, 5, 15 min) " + ", ".join(f"{x:.1f}" for x in load0) + " before, "
          + ", ".join(f"{x:.1f}" for x in os.getloadavg()) + " after")


if __name__ == "__main__":
    main()
