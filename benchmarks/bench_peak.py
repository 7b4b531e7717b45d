"""The exact memory peak (`held.exact`: the stay hints' checks, the occupancy in closed form, its
largest shown by the case-by-case bound, the comparison with the ring model): its CPU seconds.

    python benchmarks/bench_peak.py [--repeat 3] [--against REV] [--targets T1,T2,...]

Figures, each a fresh process, the median of --repeat runs of its CPU seconds (user + system):
Algorithm 1 (n(3n + 1)/m) as the peer, the non-causal `ring-attention` forward (3k(2d + 1) for
k, m ≥ 3), both with their registered hints (at a revision before ring-attention's were registered,
those of its tests/helpers/forward_stays.py), and the non-causal backward `ring-attention-bwd`
with its hints (registered on request since 2026-11-28, in tests/helpers/backward_stays.py before;
a Max of three for k ≥ 5, m ≥ 3), each derived as `prove --exact-peak` would.
--against REV also runs each on the code of git revision REV (speed.py's temporary tree), each run
right after the same run here, and prints REV's seconds over these.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed import process, revision  # noqa: E402

CODE = """import sys
from dataclasses import replace
from pathlib import Path
import ringproof.schedules
from ringproof.proofs.cli.targets import registry
from ringproof.proofs.figures.memory import held
S = registry()[sys.argv[1]]
if not S.stays.get("peak"):     # hints not registered (ring-attention before they were): its tests' copy
    sys.path.insert(0, str(Path(ringproof.schedules.__path__[0]).resolve().parent / "tests"))
    if sys.argv[1] == "ring-attention-bwd":
        from helpers.backward_stays import STAYS
        S = replace(S, stays=STAYS)
    else:
        from helpers.forward_stays import PEAK, STAYS
        S = replace(S, stays={**STAYS, "peak": PEAK})
from ringproof.proofs.ring.budgets import Budget
from ringproof.proofs.ring.session import Session
try:        # the peaks registered on request (`--exact-peak`), at revisions that have it
    session = Session(Budget(long_peaks=True))
except TypeError:
    session = Session()
top, why = held.exact(S, session)
print(top if top is not None else why)
sys.exit(0 if top is not None else 1)
"""
TARGETS = ("algo1", "ring-attention", "ring-attention-bwd")


def cpu(target: str, env: dict | None = None) -> tuple[float, int]:
    """(CPU seconds, exit code) of one fresh process deriving `target`'s exact peak."""
    _, seconds, _, code = process([target], env, CODE)
    return seconds, code


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--against", metavar="REV")
    ap.add_argument("--targets", default=",".join(TARGETS),
                    help=f"comma-separated registered targets (default {','.join(TARGETS)}); the peaks marked "
                         "on request (striped, zigzag, ...) take a minute or more each")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")

    def measure(env_then):
        for target in args.targets.split(","):
            here, then = [], []
            for _ in range(args.repeat):
                here.append(cpu(target))
                if env_then is not None:
                    then.append(cpu(target, env_then))
            line = f"{target:16s} {statistics.median(s for s, _ in here):7.2f} s CPU (exit {sorted({c for _, c in here})})"
            if then:
                s_then = statistics.median(s for s, _ in then)
                line += (f"   {args.against}: {s_then:7.2f} s (exit {sorted({c for _, c in then})}), "
                         f"ratio {s_then / statistics.median(s for s, _ in here):.1f}")
            print(line, flush=True)

    if args.against:
        with revision(args.against) as env:
            measure(env)
    else:
        measure(None)


if __name__ == "__main__":
    main()
