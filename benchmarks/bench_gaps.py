"""The gap statements of proofs/search/gaps.py (docs/optimal.md §4): each one's seconds and verdict,
in the module's order and reversed, and the same after `prove algo2`'s and `prove algo3`'s proofs in
the same process (their Z3 work before; the verdicts must not change).

    python benchmarks/bench_gaps.py

The cycle counts are derived once beforehand (their time is the counter's, printed apart); the
figure is the statements' total (the exact forms made again in each run), with `prove bound
symmetric` (its lemmas, the same kind of queries) timed in the same run as the peer.
"""

from __future__ import annotations

import time

from ringproof.proofs.ring.prover import Options, verify
from ringproof.proofs.ring.session import Session
from ringproof.proofs.search import gaps
from ringproof.proofs.search.bound import prove_bound

LISTS = [gaps.algo2_gaps, gaps.algo3_gaps, gaps.algo2_even_gaps, gaps.algo3_fast_gaps]


def statements(session: Session, reverse: bool) -> tuple[float, list]:
    gaps._exact_form.cache_clear()          # each run makes its exact forms again
    start = time.perf_counter()
    found = [g for f in (reversed(LISTS) if reverse else LISTS) for g in f(session)]
    return time.perf_counter() - start, found


def main() -> None:
    from ringproof.schedules.algo2 import ALGO2
    from ringproof.schedules.algo3 import ALGO3

    session = Session()
    start = time.perf_counter()
    statements(session, False)
    print(f"cycle counts derived (and a first pass): {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    assert prove_bound("symmetric").proved
    peer = time.perf_counter() - start
    runs = {"in order": statements(session, False), "reversed": statements(session, True)}
    for schedule in (ALGO2, ALGO3):
        verify(schedule, Options(), Session(Options().budget))
    runs["after prove algo2, algo3"] = statements(session, True)
    print("| statement | " + " | ".join(f"{k}: s" for k in runs) + " |")
    print("| --- " * (1 + len(runs)) + "|")
    for g in runs["in order"][1]:
        cells = []
        for _, found in runs.values():
            same = next(x for x in found if x.name == g.name)
            cells.append(f"{same.seconds:.2f}" + ("" if same.proved else " NOT PROVED"))
        print(f"| {g.name} | " + " | ".join(cells) + " |")
    print("| total | " + " | ".join(f"{t:.2f}" for t, _ in runs.values()) + " |")
    print(f"peer: prove_bound('symmetric') {peer:.2f} s; ratio of the first total to it "
          f"{runs['in order'][0] / peer:.2f}")


if __name__ == "__main__":
    main()
