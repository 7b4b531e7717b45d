"""A fixed run checked by SAT: the bit-level encoding with the run's op placement and sends fixed.

The same question as the independent checker (`ringproof.model.bitlevel.check_run`), answered by
the solver; tests compare the two.
"""

from __future__ import annotations

import time
from collections import Counter

from ringproof.model.bitlevel.problem import BitProblem
from ringproof.model.bitlevel.types import BitOp, BitSend, CheckResult, Run, SatVerdict
from ringproof.proofs.search.cnf import Encoding, EncodingModes
from ringproof.proofs.search.portfolio import DEFAULT_SOLVER, solve


def _key(variant: str, op: BitOp) -> tuple:
    if variant == "symmetric" and op.kind == "MAC1":
        return ("MAC1", min(op.i, op.j), max(op.i, op.j), op.l)
    return (op.kind, op.i, op.j, op.l)


def sat_check_run(run: Run, solver: str = DEFAULT_SOLVER, timeout: float | None = None,
                  compact: bool = True) -> CheckResult:
    """Bounded check by SAT: the encoding with `run`'s ops and sends fixed; SAT = a valid run.
    `compact` False: memory per cycle, as the search encodes it (the peer of benchmarks/bench_bounded.py)."""
    start = time.perf_counter()
    prob = BitProblem(run.variant, run.n, run.m, run.d, run.placement)
    keys = Counter(_key(run.variant, op) for op in run.ops)
    odd = [k for k, c in keys.items() if c > 1 or k not in prob.index]
    slots = Counter((op.p, op.t) for op in run.ops)
    if odd or any(c > 1 for c in slots.values()):
        reason = f"ops {odd[:3]} duplicated or not of this variant" if odd else "two ops on one (PE, cycle)"
        return CheckResult(SatVerdict.UNSAT, time.perf_counter() - start, solver, reason=reason)
    if any(not (0 <= op.p < run.m and 0 <= op.t < run.T) for op in run.ops):
        return CheckResult(SatVerdict.UNSAT, time.perf_counter() - start, solver, reason="op outside the grid")
    fixed_ops = {_key(run.variant, op): (op.p, op.t) for op in run.ops}
    fixed_sends = {(s.t, s.p, s.datum) for s in run.sends}
    if len(fixed_sends) != len(run.sends):
        return CheckResult(SatVerdict.UNSAT, time.perf_counter() - start, solver, reason="a send listed twice")
    enc = Encoding(prob, run.T, EncodingModes(fixed=(fixed_ops, fixed_sends), barriers=run.barriers, compact=compact))
    cnf = enc.cnf
    if cnf.conflict:
        return CheckResult(SatVerdict.UNSAT, time.perf_counter() - start, solver, cnf.nv, len(cnf.clauses),
                           enc.reason or "a fixed op or send contradicts the machine's rules")
    left = None if timeout is None else timeout - (time.perf_counter() - start)
    verdict, _, _ = solve(cnf.clauses, cnf.nv, solver, left)
    return CheckResult(verdict, time.perf_counter() - start, solver, cnf.nv, len(cnf.clauses))


def to_run(prob: BitProblem, T: int, place: dict, sends: list, barriers: str = "global") -> Run:
    """A Run from a decoded assignment."""
    ops = tuple(sorted((BitOp(t, p, k[0], k[1], k[2], k[3]) for k, (p, t) in place.items()),
                       key=lambda o: (o.t, o.p)))
    return Run(prob.variant, prob.n, prob.m, prob.d, T, ops, tuple(BitSend(t, p, x) for t, p, x in sends),
               barriers=barriers)
