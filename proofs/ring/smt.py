"""Discharging one check in Z3: a fresh solver per query, a timeout, a fixed seed.

`proved` means assumptions ∧ hypotheses ∧ ¬goal is unsatisfiable *and* the assumptions alone (the
iteration space) are satisfiable; an empty space proves nothing and is reported as `unknown`.
A satisfiable query yields the smallest counterexample found by trying n = 1, 2, ... first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from ringproof.proofs.ring.iterations import It
from ringproof.proofs.ring import budgets
from ringproof.proofs.ring.normalize import Ctx, NormalizationError, new_solver
from ringproof.proofs.ring.properties.base import Check
from ringproof.proofs.results import Verdict
from ringproof.schedules.expr import Term

SMALL_N = 24


@dataclass
class Outcome:
    check: Check
    verdict: Verdict
    seconds: float
    reason: str = ""
    n: int | None = None
    m: int | None = None
    iterations: list = field(default_factory=list)
    lemmas: set = field(default_factory=set)


def _solver(ctx: Ctx) -> z3.Solver:
    return new_solver(ctx.timeout_ms, ctx.seed, budgets.QUERY)


def discharge(check: Check, m_value: int | None = None, timeout_ms: int = 10000,
              seed: int = 0) -> Outcome:
    t0 = time.perf_counter()
    ctx = Ctx(m_value, timeout_ms, seed)
    try:
        its, hyp, goal = check.build(ctx)
        hyps = [ctx.cond(h) for h in hyp]
        g = ctx.cond(goal)
    except NormalizationError as err:
        return Outcome(check, Verdict.UNKNOWN, time.perf_counter() - t0, f"not normalized: {err}")
    s = _solver(ctx)
    s.add(*ctx.assumptions)
    base = s.check()
    if base == z3.unsat:
        return Outcome(check, Verdict.UNKNOWN, time.perf_counter() - t0,
                       "vacuous: the iteration space is empty")
    if base != z3.sat:
        return Outcome(check, Verdict.UNKNOWN, time.perf_counter() - t0,
                       f"assumptions: z3 {base} ({s.reason_unknown()})")
    s.add(*hyps)
    s.add(z3.Not(g))
    r = s.check()
    if r == z3.unsat:
        return Outcome(check, Verdict.PROVED, time.perf_counter() - t0, lemmas=ctx.lemmas_used)
    if r != z3.sat:
        return Outcome(check, Verdict.UNKNOWN, time.perf_counter() - t0,
                       f"z3 {r}: {s.reason_unknown()}")
    model = _smallest(s, ctx, m_value) or s.model()
    n = model.eval(ctx.k * ctx.m, model_completion=True).as_long()
    m = model.eval(ctx.m, model_completion=True).as_long()
    return Outcome(check, Verdict.REFUTED, time.perf_counter() - t0, n=n, m=m,
                   iterations=_decode(ctx, its, model))


def _smallest(s: z3.Solver, ctx: Ctx, m_value):
    """A model with the smallest n (then m) up to SMALL_N, if there is one."""
    for n in range(1, SMALL_N + 1):
        for m in range(1, n + 1):
            if n % m or (m_value is not None and m != m_value):
                continue
            s.push()
            s.add(ctx.m == m, ctx.k == n // m)
            found = s.check() == z3.sat
            model = s.model() if found else None
            s.pop()
            if found:
                return model
    return None


def _decode(ctx: Ctx, its: dict, model) -> list:
    out = []
    for role, it in its.items():
        if isinstance(it, It):
            row = {"role": role, "phase": it.phase.name}
            for name in it.phase.index_names:
                row[name] = ctx.int_of(ctx.val(it.idx[name]), model)
            out.append(row)
        elif isinstance(it, list):      # key variables
            row = {"role": role}
            for i, t in enumerate(it):
                row[f"key{i + 1}"] = ctx.int_of(ctx.val(t), model) if isinstance(t, Term) else t
            out.append(row)
    return out
