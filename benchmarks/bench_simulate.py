"""The streaming ring simulator's time and memory, with the whole-trace simulator it replaced as the
peer measured in the same run.

    python benchmarks/bench_simulate.py [--skip 512]

Every figure is a fresh `prove simulate ...` process: wall seconds and its peak resident memory
(os.wait4's ru_maxrss). The peer is the same command with the whole-trace simulator, the test
oracle `tests/helpers/reference_machine.py: reference_run`, in place of `machine.run`; it is measured at
n = 64 and 128 only (it needed 10.4 GiB at n = 256 and does not fit in 23 GiB at n = 512). Targets:
algo1 n = 512, m = 16 in < 30 s and < 2 GB; BERT-base (algo1-general, n = 512, d = 64, m = 16,
12 heads, one simulated) in < 10 s and < 2 GB. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

TESTS = str(Path(__file__).resolve().parent.parent / "tests")
NEW = "import sys; from ringproof.proofs.cli.main import main; sys.exit(main(sys.argv[1:]))"
OLD = ("import sys; sys.path.insert(0, %r); from helpers.reference_machine import reference_run; "
       "import ringproof.proofs.cli.simulate as cli; cli.run = reference_run; "
       "from ringproof.proofs.cli.main import main; sys.exit(main(sys.argv[1:]))" % TESTS)

CASES = [  # (what, arguments of prove simulate, peer measured, target)
    ("algo1 n=64", ["algo1", "-n", "64", "-m", "16"], True, ""),
    ("algo1 n=128", ["algo1", "-n", "128", "-m", "16"], True, ""),
    ("algo1 n=256", ["algo1", "-n", "256", "-m", "16"], False, ""),
    ("algo1 n=512", ["algo1", "-n", "512", "-m", "16"], False, "< 30 s, < 2 GB"),
    ("BERT-base", ["algo1-general", "-n", "512", "-d", "64", "-m", "16", "--heads", "12"], False,
     "< 10 s, < 2 GB"),
]


def measure(code: str, args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak resident GiB, exit code) of one fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, "simulate", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t0, usage.ru_maxrss / 2**20, os.waitstatus_to_exitcode(status)


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip", nargs="*", default=[], help="cases to leave out, by a word of their name")
    args = ap.parse_args()
    print(f"load average (1, 5, 15 min) before: {load()}")
    print("| case | `prove simulate` | seconds | peak GiB | exit | whole-trace s | whole-trace GiB "
          "| ratio (whole-trace / streaming s) | target |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for what, argv, peer, target in CASES:
        if any(word in what for word in args.skip):
            continue
        s, gib, code = measure(NEW, argv)
        old = f"{p[0]:.2f} | {p[1]:.2f} | {p[0] / s:.1f}" if peer and (p := measure(OLD, argv)) else " | | "
        print(f"| {what} | `{' '.join(argv)}` | {s:.2f} | {gib:.2f} | {code} | {old} | {target} |",
              flush=True)
    print(f"load average (1, 5, 15 min) after: {load()}")


if __name__ == "__main__":
    main()
