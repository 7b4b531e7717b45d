"""`prove conform zigzag --impl torch --world-sizes 2,3,4` (goal under 60 s) beside its peer,
`--impl ring-flash-attn` on the same world sizes, in the same run; needs the [cp] extra.

    python benchmarks/torch_conform.py

Each line: exit code, wall seconds; then torch's time over ring-flash-attn's (torch runs both
rotate methods, so about two process groups per world size to the peer's one)."""

from __future__ import annotations

import io
import os
import time

from ringproof.proofs.cli.main import main as prove


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    code = prove(list(argv), out, err)
    return code, time.perf_counter() - start


if __name__ == "__main__":
    print(f"load average {os.getloadavg()[0]:.1f}")
    times = {}
    for impl in ("torch", "ring-flash-attn"):
        code, seconds = run("conform", "zigzag", "--impl", impl, "--world-sizes", "2,3,4")
        times[impl] = seconds
        print(f"prove conform zigzag --impl {impl} --world-sizes 2,3,4: exit {code}, {seconds:.1f} s")
    print(f"torch / ring-flash-attn: {times['torch'] / times['ring-flash-attn']:.2f}")
