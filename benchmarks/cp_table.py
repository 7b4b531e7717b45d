"""The context-parallel targets beside Algorithm 3 at three sizes (docs/context-parallel.md).

    python benchmarks/cp_table.py

For (n, d, m) = (16, 8, 4), (512, 64, 16), (4096, 128, 8): cycles and utilization of
algo3-general (the paper's masked attention, all four phases) and of each target's whole forward
(scores with K travelling, online softmax, values with V travelling, the division), from the closed
forms `prove TARGET --property counts` proves for all n, d, m; active ops per rank (largest,
smallest, spread) from the pairs-per-rank closed forms (each pair: d MACs, a MAX, d + 1 EACs; each
query: d NORMs), which tests/test_cp_schedules.py checks against the schedules by enumeration. The
smallest size is also run on the ring model and must agree.
"""

from __future__ import annotations

from ringproof.model.ring.machine import run
from ringproof.proofs.figures.counting import counts
from ringproof.proofs.figures.spread import per_pe
from ringproof.schedules.algo3 import ALGO3_GENERAL
from ringproof.schedules.context_parallel import FORWARDS, SCHEDULES

SIZES = ((16, 8, 4), (512, 64, 16), (4096, 128, 8))


def main() -> None:
    forms = {"algo3-general": counts(ALGO3_GENERAL), **{name: counts(s) for name, s in FORWARDS.items()}}
    n, d, m = SIZES[0]
    for name, schedule in (("algo3-general", ALGO3_GENERAL), *FORWARDS.items()):
        r = run(schedule, n, m, d=d)
        assert r.ok and r.cycles == forms[name].at(n, m, d)["cycles"], (name, r.cycles)
        if name in SCHEDULES:                  # and the active ops per rank, by enumeration
            cp, table = SCHEDULES[name], per_pe(schedule, n, m, d)
            counted = [sum(col) for col in zip(*table.values())]
            assert counted == [cp.pairs(cp.params(n, m, d), r) * (2 * d + 2) + n // m * d for r in range(m)], name
    print("| n | d | m | schedule | cycles | utilization | active ops per rank: max / min (spread) |")
    print("|---|---|---|---|---|---|---|")
    for n, d, m in SIZES:
        for name, form in forms.items():
            at = form.at(n, m, d)
            arith = sum(v for k, v in at["ops"].items() if k != "MOVE" and v is not None)
            util = arith / (m * at["cycles"])
            if name in SCHEDULES:
                cp = SCHEDULES[name]
                P = cp.params(n, m, d)
                ops = [cp.pairs(P, r) * (2 * d + 2) + n // m * d for r in range(m)]
                ranks = f"{max(ops):,} / {min(ops):,} ({max(ops) - min(ops):,})"
            else:
                ranks = "—"
            print(f"| {n} | {d} | {m} | {name} | {at['cycles']:,} | {util:.3f} | {ranks} |")
    print(f"\n(cycles and active ops per rank checked against the ring model at (n, d, m) = {SIZES[0]})")


if __name__ == "__main__":
    main()
