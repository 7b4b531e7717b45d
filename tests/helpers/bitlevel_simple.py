"""A simple valid schedule for any sizes: gather the inputs everywhere, then each PE owns whole rows.

Far from optimal; it gives the bounded checks a run of any size before the DSL bridge exists.
Row i's ops run on PE i mod m, so no partial sum ever moves; in the symmetric variant w'_ij (i < j)
is copied from row i's PE to row j's PE between phases 1 and 2.
"""

from __future__ import annotations

from ringproof.model.bitlevel.problem import BitProblem
from ringproof.model.bitlevel.types import BitOp, BitSend, Run


def _route(items: list[tuple[tuple, int, set[int]]], m: int, start: int, sends: list[BitSend]) -> int:
    """Relay each (datum, source PE, destination PEs) along the ring, one datum per link per cycle,
    from cycle `start`; append the sends and return the first cycle after the last arrival."""
    queue = {p: [] for p in range(m)}
    for datum, src, dst in items:
        if dst - {src}:
            queue[src].append((datum, max((q - src) % m for q in dst)))
    t = start
    while any(queue.values()):
        arriving = []
        for p in range(m):
            if queue[p]:
                datum, hops = queue[p].pop(0)
                sends.append(BitSend(t, p, datum))
                if hops > 1:
                    arriving.append(((p + 1) % m, (datum, hops - 1)))
        for p, item in arriving:
            queue[p].append(item)
        t += 1
    return t


def simple_run(variant: str, n: int, m: int, d: int | None = None, placement: dict | None = None) -> Run:
    prob = BitProblem(variant, n, m, d, placement)
    sends: list[BitSend] = []
    everywhere = set(range(m))
    t = _route([(x, min(pes), everywhere) for x, pes in prob.initial.items()], m, 0, sends)
    ops: list[BitOp] = []

    def run_phase(keys, start: int) -> int:
        clock = {p: start for p in range(m)}
        for kind, i, j, l in keys:
            p = i % m
            ops.append(BitOp(clock[p], p, kind, i, j, l))
            clock[p] += 1
        return max(clock.values())

    by_kind = {k: [s.key for s in prob.ops if s.key[0] == k] for k in ("MAC1", "EAC", "DIV", "MAC3")}
    t = run_phase(by_kind["MAC1"], t)
    if variant == "symmetric":
        copies = [(("w1", i, j), i % m, {j % m}) for (_, i, j, l) in by_kind["MAC1"] if l == 0 and i != j]
        t = _route(copies, m, t, sends)
    t = run_phase(by_kind["EAC"] + by_kind["DIV"], t)
    t = run_phase(by_kind["MAC3"], t)
    return Run(variant, prob.n, m, prob.d, t, tuple(ops), tuple(sends), placement)
