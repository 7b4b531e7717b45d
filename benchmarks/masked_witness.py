"""Build masked runs at the lower bound (n = m = d odd, `proofs/search/construct.py`), replay each
with the checker and the SAT check, and store it as docs/witnesses/masked-N.json (read by
benchmarks/optimal_table.py and tests/test_construct.py).

    python benchmarks/masked_witness.py [N ...] [--timeout S]

Prints, per n: the bound, the verdict, T, the seconds to build (the phase-2 SAT call) and to replay.
A run is stored only when both replays accept it and T equals the proved bound.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

from ringproof.model.bitlevel.check import check_run
from ringproof.proofs.search.bound import bound_value
from ringproof.proofs.search.construct import at_bound
from ringproof.proofs.search.sat_check import sat_check_run

OUT = pathlib.Path(__file__).resolve().parent.parent / "docs" / "witnesses"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sizes", nargs="*", type=int, default=[7])
    p.add_argument("--timeout", type=float, default=540.0)
    args = p.parse_args()
    for n in args.sizes:
        bound = bound_value("masked", n, n)
        start = time.perf_counter()
        verdict, run = at_bound(n, timeout=args.timeout)
        built = time.perf_counter() - start
        if run is None:
            print(f"n={n}: bound {bound}, phase 2 at the bound: {verdict.value} after {built:.1f} s")
            continue
        start = time.perf_counter()
        bad, sat = check_run(run), sat_check_run(run)
        replay = time.perf_counter() - start
        ok = not bad and sat.valid and run.T == bound
        print(f"n={n}: bound {bound}, T {run.T}, checker {'valid' if not bad else bad[0]}, SAT {sat.verdict.value}, "
              f"built in {built:.1f} s, replayed in {replay:.1f} s")
        if ok:
            OUT.mkdir(exist_ok=True)
            doc = {"variant": "masked", "n": n, "m": n, "d": n, "T": run.T, "placement": "column", **run.to_json()}
            (OUT / f"masked-{n}.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
