"""The context-parallel targets beside Algorithm 3 at three sizes (docs/context-parallel.md).

    python benchmarks/cp_table.py

For (n, d, m) = (16, 8, 4), (512, 64, 16), (4096, 128, 8): cycles and utilization of
algo3-general (the paper's masked attention, all four phases) and of each target's ring pass (the
scores, K travelling), from the closed forms `prove TARGET --property counts` proves for all n,
d, m; MACs per rank (largest, smallest, spread) from the pairs-per-rank closed forms, which
tests/test_cp_schedules.py checks against the schedules by enumeration. The smallest size is also
run on the ring model and must agree.
"""

from __future__ import annotations

from ringproof.model.ring.machine import run
from ringproof.proofs.ring.counting import counts
from ringproof.schedules.algo3 import ALGO3_GENERAL
from ringproof.schedules.context_parallel import RING_PASSES, SCHEDULES

SIZES = ((16, 8, 4), (512, 64, 16), (4096, 128, 8))


def main() -> None:
    forms = {"algo3-general": counts(ALGO3_GENERAL), **{name: counts(s) for name, s in RING_PASSES.items()}}
    n, d, m = SIZES[0]
    for name, schedule in (("algo3-general", ALGO3_GENERAL), *RING_PASSES.items()):
        r = run(schedule, n, m, d=d)
        assert r.ok and r.cycles == forms[name].at(n, m, d)["cycles"], (name, r.cycles)
    print("| n | d | m | schedule | cycles | utilization | MACs per rank: max / min (spread) |")
    print("|---|---|---|---|---|---|---|")
    for n, d, m in SIZES:
        for name, form in forms.items():
            at = form.at(n, m, d)
            arith = sum(v for k, v in at["ops"].items() if k != "MOVE" and v is not None)
            util = arith / (m * at["cycles"])
            if name in SCHEDULES:
                cp = SCHEDULES[name]
                P = cp.params(n, m, d)
                macs = [cp.pairs(P, r) * d for r in range(m)]
                ranks = f"{max(macs):,} / {min(macs):,} ({max(macs) - min(macs):,})"
            else:
                ranks = "—"
            print(f"| {n} | {d} | {m} | {name} | {at['cycles']:,} | {util:.3f} | {ranks} |")
    print(f"\n(cycles checked against ring-model runs at (n, d, m) = {SIZES[0]})")


if __name__ == "__main__":
    main()
