"""Packed sequences: how long `prove conform zigzag-varlen --impl ring-flash-attn` and `prove conform
llama3-varlen --impl ring-flash-attn` take, beside the single-sequence run in the same process.

    python benchmarks/varlen_conform.py [--vectors 4] [--world-sizes 2,3,4] [--seed 0] [--repeat 1]

Runs, in process (torch imported once, before either), after one untimed warm-up of each:
  - the peer, `prove conform zigzag --impl ring-flash-attn --world-sizes 2,3,4` (two sizes of n
    per world size);
  - `prove conform zigzag-varlen --impl ring-flash-attn --world-sizes 2,3,4 --vectors 4` (four
    random lengths vectors meeting 2m | L_i per world size);
  - `prove conform llama3-varlen --impl ring-flash-attn --world-sizes 2,3,4 --vectors 4` (four
    random lengths vectors with m | T per world size, documents crossing ranks);
and prints each one's exit code, wall seconds (median of --repeat), the load average before it and
the ratios varlen / peer and llama3 / peer. Issue 46's goal: the varlen run under 60 s. Needs the
[cp] extra.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import time

from ringproof.proofs.cli.main import main as prove


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    code = prove(["conform", *argv], out, err)
    return code, time.perf_counter() - t0, (out.getvalue() + err.getvalue()).strip().splitlines()[-1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vectors", type=int, default=4)
    ap.add_argument("--world-sizes", default="2,3,4")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    import torch  # noqa: F401  (both runs fork their ranks from a process that has it)

    peer = ["zigzag", "--impl", "ring-flash-attn", "--world-sizes", args.world_sizes]
    varlen = ["zigzag-varlen", "--impl", "ring-flash-attn", "--world-sizes", args.world_sizes,
              "--vectors", str(args.vectors), "--seed", str(args.seed)]
    llama3 = ["llama3-varlen", *varlen[1:]]
    for argv in (peer, varlen, llama3):     # warm-up: the library's modules and jit scripts
        run(argv)
    times = {}
    for name, argv in (("peer", peer), ("varlen", varlen), ("llama3", llama3)):
        runs = []
        for _ in range(args.repeat):
            load = os.getloadavg()[0]
            code, seconds, last = run(argv)
            runs.append(seconds)
        times[name] = statistics.median(runs)
        print(f"prove conform {' '.join(argv)}: exit {code}, {times[name]:.1f} s (load {load:.1f}); {last[0] if last else ''}")
    print(f"varlen / peer: {times['varlen'] / times['peer']:.2f} (goal: varlen under 60 s)")
    print(f"llama3 / peer: {times['llama3'] / times['peer']:.2f}")


if __name__ == "__main__":
    main()
