"""Packed sequences: how long `prove layout` takes over every lengths vector, beside a peer.

    python benchmarks/varlen_layout.py [--repeat K]

Each figure is the median of K in-process runs (torch imported once, in an untimed warm-up), with
its wall and CPU seconds, and its ratio to the peer measured in the same run: the single-sequence
`prove layout zigzag --against torch-head-tail --max-n 4096 --max-m 16` (docs/context-parallel.md's
figure, 6,918 sizes).

  - `prove layout zigzag-varlen --against torch-per-document-head-tail` over every vector with
    D ≤ 3, T ≤ 64, m ≤ 4 (the defaults; goal under 10 s). It stops at its first difference
    (exit 1: torch 2.13.0's balancer is document-major), so it times the early exit only;
  - the same bounds against maps that are right everywhere, so every (lengths, m) pair is called:
    `te-thd`, the reference (the target's own layout, `Varlen.positions`, as a MODULE:CALLABLE)
    and torch's balancer with its output regrouped rank-major (`torch_rank_major` below: the
    balancer called at every pair, as the goal's figure needs).
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import time

from ringproof.proofs.cli.main import main as prove

PEER = ("layout", "zigzag", "--against", "torch-head-tail", "--max-n", "4096", "--max-m", "16")
RUNS = {
    "torch-per-document-head-tail": ("layout", "zigzag-varlen", "--against", "torch-per-document-head-tail"),
    "te-thd": ("layout", "zigzag-varlen", "--against", "te-thd"),
    "reference": ("layout", "zigzag-varlen", "--against", f"{__file__}:reference"),
    "torch rank-major": ("layout", "zigzag-varlen", "--against", f"{__file__}:torch_rank_major"),
}


def reference(lengths, world_size):
    """zigzag-varlen's own layout: the formula the check compares with, so every pair is called."""
    from ringproof.schedules.documents import VARLEN

    return VARLEN["zigzag-varlen"].positions(lengths, world_size)


def torch_rank_major(lengths, world_size):
    """torch's per-document balancer, each document's m rank blocks moved to their ranks: the
    order the zigzag varlen ring needs (rank r: its chunks of document 1, then of document 2, …)."""
    import numpy as np

    from ringproof.proofs.cp.adapters import torch_per_document_head_tail

    out = torch_per_document_head_tail(lengths, world_size)       # raises unless 2m | L_i
    starts = np.cumsum([0, *lengths])
    return np.concatenate([out[starts[i] + r * length // world_size:starts[i] + (r + 1) * length // world_size]
                           for r in range(world_size) for i, length in enumerate(lengths)])


def cpu() -> float:
    return sum(getattr(resource.getrusage(resource.RUSAGE_SELF), f) for f in ("ru_utime", "ru_stime"))


def run(argv, repeat: int):
    """(median wall seconds, median CPU seconds, exit code, the last line printed)."""
    walls, cpus = [], []
    for _ in range(repeat):
        out, err = io.StringIO(), io.StringIO()
        c0, t0 = cpu(), time.perf_counter()
        code = prove(list(argv), out, err)
        walls.append(time.perf_counter() - t0)
        cpus.append(cpu() - c0)
    last = (out.getvalue() + err.getvalue()).strip().splitlines()[-1:]
    return statistics.median(walls), statistics.median(cpus), code, last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command (the median is shown)")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; median of {args.repeat} runs in process")
    run(PEER, 1)                                    # warm-up: torch imported, not timed
    run(RUNS["torch-per-document-head-tail"], 1)
    peer_wall, peer_cpu, code, _ = run(PEER, args.repeat)
    print(f"  peer: prove {' '.join(PEER)}: {peer_wall:.2f} s (CPU {peer_cpu:.2f} s), exit {code}")
    for name, argv in RUNS.items():
        wall, seconds, code, last = run(argv, args.repeat)
        shown = " ".join(a.replace(__file__, "benchmarks/varlen_layout.py") for a in argv)
        print(f"  prove {shown} (D ≤ 3, T ≤ 64, m ≤ 4): {wall:.2f} s (CPU {seconds:.2f} s), exit {code}, "
              f"{wall / peer_wall:.2f} × the peer (goal < 10 s)")
        print(f"    {last[0][:160] if last else ''}")


if __name__ == "__main__":
    main()
