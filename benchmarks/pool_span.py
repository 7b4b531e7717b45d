"""How long `prove TARGET` would take on two idle cores, from CPU seconds (which a shared machine's
load changes much less than wall seconds).

    python benchmarks/pool_span.py [TARGET ...] [--repeat K] [--against REV] [--exact-peak] [--peer TARGET]

For each target (default: algo1, zigzag, algo3-fast), one fresh process runs `prove TARGET --quiet
--jobs 2` with each pool task timed in its worker (CPU seconds); it prints the parent's CPU seconds
before the pool (interpreter, imports, the steps run on ints, the checks derived) and after it
(verdicts, table), the tasks' CPU seconds, the three longest, and the pool's span: the tasks handed
out in list order to whichever of two workers is free first, as `pool.run_all` does. A task run
beside the parent's work before the pool (`pool.beside`: the steps on ints against their formulas)
is timed in its worker too: where it ends after the parent asks for it (its start plus its CPU
seconds, against the parent's CPU clock), the parent's wait is added. The estimate is before +
waiting + span + after: the wall time on two idle cores, less the forks and the interpreter's
exit; the project's bytecode is cached as on a user's machine (`speed.as_users`). --against REV
runs the same on the code of git revision REV (`speed.py --against`'s temporary tree), each run
right after the one here; medians of --repeat runs. --exact-peak runs `prove TARGET --exact-peak`
(the peaks a schedule marks on request derived too). --peer TARGET runs the peer's plain `prove`
right after each run and prints the median of the runs' ratios (target / peer): issue 28 measures
every context-parallel target against striped's 2.5 s, and on a machine whose speed moves within
minutes the ratio moves much less than either estimate.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))        # speed.py: revisions

PROBE = r"""
import json, sys, time
from ringproof.proofs.ring import pool, prover
spans, run_all = [], pool.run_all

def timed(task):
    def run():
        t0 = time.process_time()
        return task(), time.process_time() - t0
    return run

def measured(tasks, jobs=0):
    before = time.process_time()
    out = run_all([timed(t) for t in tasks], jobs)
    cost, free = [c for _, c in out], [0.0, 0.0]
    for c in cost:
        free[free.index(min(free))] += c
    names = [getattr(getattr(t, "func", t), "__name__", "?") for t in tasks]
    longest = sorted(zip(cost, names), reverse=True)[:3]
    spans.append({"before": before, "span": max(free), "tasks": sum(cost), "after_pool": time.process_time(),
                  "longest": [[n, round(c, 2)] for c, n in longest]})
    return [r for r, _ in out]

pool.run_all = prover.run_all = measured
side = []

if hasattr(pool, "beside"):         # a task run beside the parent's work before the pool
    import contextlib
    beside = pool.beside

    @contextlib.contextmanager
    def timed_beside(task, jobs=0):
        begun = time.process_time()
        with beside(timed(task), jobs) as wait:
            def waited():
                got, cost = wait()
                if not side:
                    side.append(max(0.0, begun + cost - time.process_time()))
                return got
            yield waited

    pool.beside = prover.beside = timed_beside
from ringproof.proofs.cli.main import main
import io
code = main(sys.argv[1:] + ["--quiet", "--jobs", "2"], io.StringIO(), io.StringIO())
s = spans[0]
print(json.dumps({"exit": code, "before": s["before"], "beside": sum(side), "span": s["span"], "tasks": s["tasks"],
                  "after": time.process_time() - s["after_pool"], "longest": s["longest"]}))
"""


def probe(target: str, env: dict | None = None, extra: tuple = ()) -> dict:
    """One fresh run's figures, with the bytecode cached as a user's Python does (`speed.as_users`);
    `extra`: more options of `prove TARGET`."""
    from speed import as_users
    p = subprocess.run([sys.executable, "-P", "-c", PROBE, target, *extra], env=as_users(env), capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise SystemExit(f"{target}: {p.stderr.strip().splitlines()[-1:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["estimate"] = out["before"] + out["beside"] + out["span"] + out["after"]
    return out


def line(runs: list[dict]) -> str:
    med = {k: statistics.median(r[k] for r in runs) for k in ("before", "beside", "span", "tasks", "after", "estimate")}
    longest = ", ".join(f"{n} {c}" for n, c in runs[len(runs) // 2]["longest"])
    return (f"{med['estimate']:.2f} s (before {med['before']:.2f} + waiting {med['beside']:.2f} + span {med['span']:.2f} "
            f"of {med['tasks']:.2f} s "
            f"of tasks + after {med['after']:.2f}; longest: {longest}; exit {runs[0]['exit']})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", default=["algo1", "zigzag", "algo3-fast"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--against", help="git revision to measure the same way, interleaved")
    ap.add_argument("--exact-peak", action="store_true", help="run prove TARGET --exact-peak")
    ap.add_argument("--peer", help="a target whose plain prove runs right after each run; the median ratio is printed")
    args = ap.parse_args()
    extra = ("--exact-peak",) if args.exact_peak else ()
    from speed import revision
    import contextlib
    print(f"load average {os.getloadavg()[0]:.1f}; estimated seconds on two idle cores, medians of {args.repeat}:")
    with revision(args.against) if args.against else contextlib.nullcontext() as env:
        for target in args.targets:
            here, there, ratios = [], [], []
            for _ in range(args.repeat):
                here.append(probe(target, extra=extra))
                if env is not None:
                    there.append(probe(target, env, extra))
                if args.peer:
                    ratios.append(here[-1]["estimate"] / probe(args.peer)["estimate"])
            print(f"{target}{' --exact-peak' if extra else ''}: {line(here)}")
            if ratios:
                print(f"  / {args.peer}'s, run after each: median {statistics.median(ratios):.2f} "
                      f"({', '.join(f'{r:.2f}' for r in ratios)})")
            if env is not None:
                ratio = statistics.median(r["estimate"] for r in there) / statistics.median(r["estimate"] for r in here)
                print(f"  {args.against}: {line(there)}; {args.against} / here {ratio:.2f}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
