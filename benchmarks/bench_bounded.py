"""Speed of the bounded sweep and of the bit-level check (issue #13), each beside its peer measured
in the same run.

    python benchmarks/bench_bounded.py [--repeat 1] [--max-n 64 96]

Every figure is a fresh process: wall seconds (median of --repeat runs) and peak resident memory
(os.wait4's ru_maxrss, the largest of the runs). Peers: the bit-level check of Algorithm 1 at
n = 15, m = 5 for the bounded sweeps (the issue compares the two), and for that check the same run
checked with the per-cycle encoding of its memory (`sat_check_run(..., compact=False)`: the CNF
`--method bitlevel` built before the compact one, clause for clause, though now built faster) plus
the independent checker, as `prove` does. Before this work the command took 75 s and 3.2 GiB (idle).
Targets (2 cores): max-n 64 < 5 s, max-n 96 < 30 s; bit-level < 27.4 s (the paper's, 44 cores)
and < 1 GiB. The load average is printed beside the table: on a shared machine the ratios are the
figures to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import run  # noqa: E402

BITLEVEL = ["algo1", "--tier", "bounded", "--method", "bitlevel", "-n", "15", "-m", "5", "--timeout", "600"]


def measure(argv: list[str], repeat: int) -> dict:
    runs = [run(argv) for _ in range(repeat)]
    return {"cmd": "prove " + " ".join(argv), "s": statistics.median(r[0] for r in runs),
            "gib": max(r[1] for r in runs), "exit": sorted({r[2] for r in runs})}


def per_cycle_peer(repeat: int) -> dict:
    """The bit-level check of the same run with the per-cycle encoding, in fresh processes."""
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, __file__, "--per-cycle"], stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        runs.append((time.perf_counter() - t0, usage.ru_maxrss / 2**20, os.waitstatus_to_exitcode(status)))
    return {"cmd": "per-cycle encoding of the same run (sat_check_run compact=False) + checker",
            "s": statistics.median(r[0] for r in runs), "gib": max(r[1] for r in runs),
            "exit": sorted({r[2] for r in runs})}


def _per_cycle() -> int:
    """What `prove ... --method bitlevel` does, with the per-cycle encoding; exit 0 iff both accept."""
    from ringproof.model.bitlevel import check_run
    from ringproof.model.bitlevel.bridge import to_run
    from ringproof.proofs.search.sat_check import sat_check_run
    from ringproof.schedules.algo1 import ALGO1

    run_ = to_run(ALGO1, 15, 5)
    return 0 if not check_run(run_) and sat_check_run(run_, timeout=600, compact=False).valid else 1


def table(rows) -> str:
    out = ["| measure | command | seconds | peak GiB | exit | peer | peer seconds | peer GiB | "
           "ratio (peer / figure) s, GiB | target |", "| --- " * 10 + "|"]
    for what, f, peer, target in rows:
        out.append(f"| {what} | `{f['cmd']}` | {f['s']:.2f} | {f['gib']:.2f} | {', '.join(map(str, f['exit']))} | "
                   f"{peer['cmd']} (exit {', '.join(map(str, peer['exit']))}) | {peer['s']:.2f} | {peer['gib']:.2f} | "
                   f"{peer['s'] / f['s']:.2f}, {peer['gib'] / f['gib']:.2f} | {target} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs per figure (the median is shown)")
    ap.add_argument("--max-n", type=int, nargs="+", default=[64, 96], help="bounded sweeps to measure")
    ap.add_argument("--per-cycle", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.per_cycle:
        sys.exit(_per_cycle())
    load0 = os.getloadavg()
    bit = measure(BITLEVEL, args.repeat)
    rows = [(f"bounded sweep, max-n {n}", measure(["algo1", "--tier", "bounded", "--max-n", str(n)], args.repeat),
             bit, "< 5 s" if n <= 64 else "< 30 s") for n in args.max_n]
    rows.append(("bit-level check, n = 15, m = 5", bit, per_cycle_peer(args.repeat), "< 27.4 s, < 1 GiB"))
    load1 = os.getloadavg()
    print(table(rows))
    print(f"{os.cpu_count()} cores; load average (1, 5, 15 min) {', '.join(f'{x:.1f}' for x in load0)} before, "
          f"{', '.join(f'{x:.1f}' for x in load1)} after")


if __name__ == "__main__":
    main()
