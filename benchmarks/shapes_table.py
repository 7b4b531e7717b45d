"""Cycles and utilization of the general-shape schedules at real transformer sizes.

    python benchmarks/shapes_table.py

Prints the Markdown table of docs/shapes.md: for each model shape (sequence length n, head
dimension d, heads H) and ring of m PEs, the cycles of one attention layer (H heads run one after
another) and the utilization, for plain (algo1-general) and masked (algo3-general, a decoder's
causal attention) attention. The figures are the closed forms that
`prove algo*-general --property counts` proves for all n, d, m, evaluated at the size; the rows
small enough to simulate in seconds are also run on the ring model and must agree.
"""

from __future__ import annotations

import time

from ringproof.model.ring.machine import run
from ringproof.proofs.figures.counting import counts
from ringproof.schedules.algo1 import ALGO1_GENERAL
from ringproof.schedules.algo3 import ALGO3_GENERAL

MODELS = (("BERT-base", 512, 64, 12), ("GPT-2 small", 1024, 64, 12), ("long-context decoder", 2048, 128, 1))
RINGS = (8, 16, 64)
SCHEDULES = (("plain", ALGO1_GENERAL), ("masked", ALGO3_GENERAL))
CROSS_CHECK = ((32, 8, 8), (16, 32, 8))     # (n, d, m) small enough to simulate: closed form = run


def main() -> None:
    forms = {name: counts(s) for name, s in SCHEDULES}
    for name, s in SCHEDULES:
        for n, d, m in CROSS_CHECK:
            r = run(s, n, m, d=d)
            want = forms[name].at(n, m, d)["cycles"]
            assert r.ok and r.cycles == want, (name, n, d, m, r.cycles, want)
    print("| model | n | d | H | m | " + " | ".join(f"{k} cycles | {k} util." for k, _ in SCHEDULES) + " |")
    print("|---" * (5 + 2 * len(SCHEDULES)) + "|")
    for model, n, d, heads in MODELS:
        for m in RINGS:
            cells = []
            for name, _ in SCHEDULES:
                c = forms[name]
                cyc = c.at(n, m, d)["cycles"]
                ops = c.at(n, m, d)["ops"]
                arith = sum(ops[k] for k in ("MAC", "EAC", "DIV"))
                cells += [f"{heads * cyc:,}", f"{arith / (m * cyc):.3f}"]
            print(f"| {model} | {n} | {d} | {heads} | {m} | " + " | ".join(cells) + " |")
    t0 = time.perf_counter()
    r = run(ALGO1_GENERAL, 64, 16, d=64)
    print(f"\n(closed forms checked against ring-model runs at (n, d, m) = {CROSS_CHECK}; "
          f"one run of algo1-general at n = d = 64, m = 16 took {time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
