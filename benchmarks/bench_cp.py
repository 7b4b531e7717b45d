"""Context parallelism: how long the checks of docs/context-parallel.md take, beside a peer.

    python benchmarks/bench_cp.py [--skip-conform]

Figures, each measured in this run:
  - every property of each context-parallel target at tier parametric (`prove TARGET`), beside the
    peer: striped's ring pass of the scores alone (the schedule issue 25 measured at 2.5 s, which
    the striped target was before it became the whole forward);
  - `prove layout zigzag --against torch-head-tail --max-n 4096 --max-m 16` (needs torch);
  - `prove conform zigzag --impl ring-flash-attn --world-sizes 2,3,4` (needs the [cp] extra).
"""

from __future__ import annotations

import argparse
import io
import time

from ringproof.proofs.cli.main import main as prove
from ringproof.proofs.cli.targets import registry
from ringproof.proofs.options import Options
from ringproof.proofs.ring.prover import verify
from ringproof.proofs.results import Verdict
from ringproof.schedules.context_parallel import BACKWARDS, RING_PASSES, SCHEDULES

PEER = "striped scores pass"


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0


def command(*argv):
    out, err = io.StringIO(), io.StringIO()
    code, seconds = timed(lambda: prove(list(argv), out, err))
    return code, seconds, (out.getvalue() + err.getvalue()).strip().splitlines()[-1:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-conform", action="store_true", help="leave out the process-group run")
    args = ap.parse_args()
    print("prove TARGET (every property, tier parametric, jobs = 1):")
    times = {}
    names = [PEER, *SCHEDULES, *BACKWARDS]
    schedules = {PEER: RING_PASSES["striped"], **registry()}
    for name in names:
        results, times[name] = timed(lambda: verify(schedules[name], Options(jobs=1)))
        unproved = sum(r.verdict is not Verdict.PROVED for r in results)
        print(f"  {name:26s} {times[name]:6.2f} s  "
              f"{'all proved' if not unproved else f'{unproved} of {len(results)} not proved'}")
    for name in names[1:]:
        print(f"  {name:26s} {times[name] / times[PEER]:5.2f} × the peer ({PEER}, {times[PEER]:.2f} s)")
    code, seconds, last = command("layout", "zigzag", "--against", "torch-head-tail", "--max-n", "4096",
                                  "--max-m", "16")
    print(f"prove layout zigzag --against torch-head-tail --max-n 4096 --max-m 16: exit {code}, "
          f"{seconds:.1f} s (target < 10 s; {times[PEER]:.2f} s the peer) {last}")
    if not args.skip_conform:
        code, seconds, last = command("conform", "zigzag", "--impl", "ring-flash-attn", "--world-sizes", "2,3,4")
        print(f"prove conform zigzag --impl ring-flash-attn --world-sizes 2,3,4: exit {code}, "
              f"{seconds:.1f} s (target < 60 s; {times[PEER]:.2f} s the peer) {last}")


if __name__ == "__main__":
    main()
