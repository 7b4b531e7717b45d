"""Context parallelism: how long the checks of docs/context-parallel.md take, beside a peer.

    python benchmarks/bench_cp.py [--skip-conform] [--jobs N] [--against REV [--repeat K]]

Figures, each measured in this run:
  - every property of each context-parallel target at tier parametric, as `prove TARGET` runs it
    (one worker process per core; `--jobs 1`: one process), beside the peer: striped's ring pass of
    the scores alone (the schedule issue 25 measured at 2.5 s, which the striped target was before
    it became the whole forward). Each line gives the wall time and the CPU seconds of this process
    and its workers, and the load average before the run: on a shared machine the wall time
    follows the load, the CPU time much less;
  - `prove layout zigzag --against torch-head-tail --max-n 4096 --max-m 16` (needs torch);
  - `prove conform zigzag --impl ring-flash-attn --world-sizes 2,3,4` (needs the [cp] extra).

--against REV (instead of the above): each target as a user runs it, a fresh `prove TARGET --quiet`
process, here and on the code of git revision REV (`speed.py --against`'s temporary tree), each
run there right after the same run here so that both see the same load; the medians of --repeat
runs of the wall time and of the CPU seconds of the process and its workers, and REV's CPU seconds
over these (on a shared machine the CPU seconds are the figure to compare; the wall time on idle
cores is about half of them plus the serial start and end).
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import sys
import time
from pathlib import Path

from ringproof.proofs.cli.main import main as prove
from ringproof.proofs.cli.targets import registry
from ringproof.proofs.options import Options
from ringproof.proofs.ring.prover import verify
from ringproof.proofs.results import Verdict
from ringproof.schedules.context_parallel import BACKWARDS, RING_PASSES, SCHEDULES

sys.path.insert(0, str(Path(__file__).resolve().parent))        # speed.py: the `prove` entry, revisions

PEER = "striped scores pass"


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0


def cpu() -> float:
    """CPU seconds of this process and of its children that have ended (the pool's workers)."""
    return sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))


def command(*argv):
    out, err = io.StringIO(), io.StringIO()
    code, seconds = timed(lambda: prove(list(argv), out, err))
    return code, seconds, (out.getvalue() + err.getvalue()).strip().splitlines()[-1:]


def fresh(target: str, env: dict | None = None) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the process and its workers, exit code) of `prove TARGET --quiet`
    in a fresh process (`speed.process`)."""
    from speed import process
    wall, seconds, _, code = process([target, "--quiet"], env)
    return wall, seconds, code


def against(rev: str, repeat: int) -> None:
    from speed import revision
    names = [*SCHEDULES, *BACKWARDS]
    print(f"prove TARGET --quiet, fresh processes, median of {repeat} (load average {os.getloadavg()[0]:.1f}); "
          f"here | {rev} | {rev} CPU / here CPU:")
    with revision(rev) as env:
        for name in names:
            here, there = [], []
            for _ in range(repeat):
                here.append(fresh(name))
                there.append(fresh(name, env))
            (hw, hc), (tw, tc) = [(statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
                                  for runs in (here, there)]
            codes = sorted({r[2] for r in here + there})
            print(f"  {name:26s} {hw:6.2f} s (CPU {hc:5.2f} s) | {tw:6.2f} s (CPU {tc:5.2f} s) | {tc / hc:4.2f}"
                  f"  exit {', '.join(map(str, codes))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-conform", action="store_true", help="leave out the process-group run")
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (0: one per core, as prove runs)")
    ap.add_argument("--against", metavar="REV", help="fresh processes here and at git revision REV, interleaved")
    ap.add_argument("--repeat", type=int, default=3, help="runs per target with --against (the median is shown)")
    args = ap.parse_args()
    if args.against:
        return against(args.against, args.repeat)
    print(f"prove TARGET (every property, tier parametric, jobs = {args.jobs or os.cpu_count()}; "
          f"load average {os.getloadavg()[0]:.1f}):")
    times = {}
    names = [PEER, *SCHEDULES, *BACKWARDS]
    schedules = {PEER: RING_PASSES["striped"], **registry()}
    verify(schedules[PEER], Options(jobs=args.jobs))     # warm-up: imports and caches, not timed
    for name in names:
        before = cpu()
        results, times[name] = timed(lambda: verify(schedules[name], Options(jobs=args.jobs)))
        unproved = sum(r.verdict is not Verdict.PROVED for r in results)
        print(f"  {name:26s} {times[name]:6.2f} s  (CPU {cpu() - before:5.2f} s)  "
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
