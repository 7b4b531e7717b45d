"""Figures for the bit-level model (prints; never a timed unit test).

    python benchmarks/bench_bitlevel.py            # masked n=3, n=4 per solver; bounded check n=6, m=3
    python benchmarks/bench_bitlevel.py --big      # also masked n=5 and symmetric n=6 (10 min each)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ringproof.model.bitlevel import check_run
from ringproof.proofs.search.sat_check import sat_check_run
from ringproof.proofs.search.minimum import search
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # test-only helpers
from helpers.bitlevel_simple import simple_run


def _search_line(variant: str, n: int, solver: str, timeout: float) -> str:
    r = search(variant, n, n, solver=solver, timeout=timeout)
    verdict = f"min {r.min_cycles} (T={r.unsat_below} UNSAT)" if r.proven else \
        f"NOT proven: best {r.best_sat}, UNSAT up to {r.unsat_below} ({r.reason})"
    calls = ", ".join(f"T={a.T}{list(a.split)} {a.stage}: {a.verdict.value} {a.seconds:.2f}s"
                      for a in r.attempts if a.seconds > 0.005)
    return f"{variant:9s} n=m={n}  {solver:10s} {verdict:28s} total {r.seconds:7.2f} s  [{calls}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="also masked n=5 and symmetric n=6")
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args()
    print("== optimal-schedule search (ES), solver comparison ==")
    for solver in ("portfolio", "kissat404", "cadical195", "glucose4", "z3"):
        print(_search_line("masked", 3, solver, args.timeout))
    for solver in ("portfolio", "kissat404", "cadical195"):
        print(_search_line("masked", 4, solver, args.timeout))
    print("== bounded check of a plain schedule, n=6, m=3 (gather-then-rows schedule) ==")
    run = simple_run("plain", 6, 3)
    start = time.perf_counter()
    problems = check_run(run)
    checker = time.perf_counter() - start
    res = sat_check_run(run)
    print(f"T={run.T}, {len(run.ops)} ops, {len(run.sends)} sends: checker {checker:.3f} s ({len(problems)} "
          f"violations); SAT check {res.verdict.value} in {res.seconds:.2f} s "
          f"({res.variables} vars, {res.clauses} clauses, {res.solver})")
    if args.big:
        print("== past the paper's time-outs ==")
        print(_search_line("masked", 5, "portfolio", args.timeout))
        print(_search_line("symmetric", 6, "portfolio", args.timeout))


if __name__ == "__main__":
    main()
