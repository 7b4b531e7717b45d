"""General shapes: parametric proof times of algo1/2/3-general beside the paper's n = d schedules
(measured in the same run), and the BERT-base simulation's time and peak memory.

    python benchmarks/bench_shapes.py [--jobs 2] [--skip-bert] [--bert-limit-s 120]

The BERT-base run (`prove simulate algo1-general -n 512 -d 64 -m 16 --heads 12`) runs in a child
process under a 4 GB address-space limit and a time limit; one that exceeds either is reported as
such, with the figures of the largest of n = 64, 128, 256 that finished.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

from ringproof.proofs.cli.targets import registry
from ringproof.proofs.ring.prover import Options, verify

PAIRS = (("algo1", "algo1-general"), ("algo2", "algo2-general"), ("algo3", "algo3-general"))
MEM_LIMIT = 4 << 30


def proof_times(jobs: int) -> None:
    reg = registry()
    print("| schedule | wall s | verdicts | paper schedule wall s | ratio |")
    print("|---|---|---|---|---|")
    for paper, general in PAIRS:
        secs, verdicts = {}, {}
        for name in (paper, general):
            t0 = time.perf_counter()
            results = verify(reg[name], Options(jobs=jobs))
            secs[name] = time.perf_counter() - t0
            verdicts[name] = ", ".join(sorted({f"{r.property}: {r.verdict.value}" for r in results
                                               if r.verdict.value != "proved"})) or "all proved"
        print(f"| {general} | {secs[general]:.1f} | {verdicts[general]} | {secs[paper]:.1f} "
              f"| {secs[general] / secs[paper]:.2f} |")


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))


def simulate(n: int, limit_s: float):
    """(seconds, peak MB, output) of one `prove simulate` child, or None past the limits."""
    cmd = [sys.executable, "-c", "import sys; from ringproof.proofs.cli import main; sys.exit(main())",
           "simulate", "algo1-general", "-n", str(n),
           "-d", "64", "-m", "16", "--heads", "12"]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit_s, preexec_fn=_limit)
    except subprocess.TimeoutExpired:
        return None
    secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return (secs, peak, p.stdout) if p.returncode == 0 else None


def bert(limit_s: float) -> None:
    got = simulate(512, limit_s)
    if got is not None:
        secs, peak, out = got
        print(f"\nBERT-base (n=512, d=64, m=16, 12 heads): {secs:.1f} s, peak {peak:.0f} MB (target < 10 s, < 2 GB)")
        print(out)
        return
    print(f"\nBERT-base (n=512, d=64, m=16, 12 heads): did not finish within {limit_s:.0f} s and 4 GB")
    for n in (64, 128, 256):
        got = simulate(n, limit_s)
        if got is None:
            break
        print(f"  n={n}: {got[0]:.1f} s, peak {got[1]:.0f} MB (peak over all children so far)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-bert", action="store_true")
    ap.add_argument("--bert-limit-s", type=float, default=120)
    args = ap.parse_args()
    proof_times(args.jobs)
    if not args.skip_bert:
        bert(args.bert_limit_s)


if __name__ == "__main__":
    main()
