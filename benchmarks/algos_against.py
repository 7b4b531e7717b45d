"""Algorithms 1–3 together, here and at another revision, interleaved in one run.

    python benchmarks/algos_against.py --against REV [--repeat 3] [--jobs N]

Each repeat runs `prove algo1`, `prove algo2` and `prove algo3` as fresh processes (`speed.process`)
on this tree and on REV's (`speed.revision`), one right after the other and in alternating order,
so that both see the same load. Prints per target the median wall and CPU seconds (the process
and its workers) of each, and the ratio here / REV of the three together: CPU is the figure to
read on a shared machine, where wall time follows the load.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import process, revision  # noqa: E402

ALGOS = ("algo1", "algo2", "algo3")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--against", metavar="REV", required=True)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--jobs", type=int, default=0, help="prove --jobs (0: one per core)")
    args = p.parse_args(argv)
    here: dict = {a: [] for a in ALGOS}
    there: dict = {a: [] for a in ALGOS}
    with revision(args.against) as env:
        for i in range(args.repeat):
            for a in ALGOS:
                argv_ = [a, "--quiet", "--jobs", str(args.jobs)]
                pair = [(here, None), (there, env)]
                for store, e in (pair if i % 2 == 0 else pair[::-1]):
                    wall, cpu, _, code = process(argv_, e)
                    store[a].append((wall, cpu, code))
    print(f"{'target':8} {'here wall':>10} {'here CPU':>9} {args.against[:10]:>10} wall {'CPU':>6}  exit")
    total = {"here": [0.0, 0.0], "there": [0.0, 0.0]}
    for a in ALGOS:
        h = [statistics.median(r[k] for r in here[a]) for k in (0, 1)]
        t = [statistics.median(r[k] for r in there[a]) for k in (0, 1)]
        for k in (0, 1):
            total["here"][k] += h[k]
            total["there"][k] += t[k]
        codes = sorted({r[2] for r in here[a]}), sorted({r[2] for r in there[a]})
        print(f"{a:8} {h[0]:10.2f} {h[1]:9.2f} {t[0]:15.2f} {t[1]:6.2f}  {codes[0]} / {codes[1]}")
    print(f"together: here / {args.against[:10]}: wall {total['here'][0] / total['there'][0]:.3f}, "
          f"CPU {total['here'][1] / total['there'][1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
