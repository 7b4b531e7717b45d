"""Discharging one check in Z3: a fresh solver per query, a timeout, a fixed seed.

`proved` means assumptions ∧ hypotheses ∧ ¬goal is unsatisfiable *and* the assumptions alone (the
iteration space) are satisfiable; an empty space proves nothing and is reported as `unknown`.
A satisfiable query yields the smallest counterexample found by trying n = 1, 2, ... first, its
iteration indices then each made least in turn, so that a refutation names the same iterations
whatever Z3's search took before (a pool worker's earlier queries change the model Z3 returns).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import z3

from ringproof.proofs.interrupts import stop_if_requested
from ringproof.proofs.ring import smtlib
from ringproof.proofs.ring.iterations import It
from ringproof.proofs.ring.normalize import Ctx, LiteralBound, NormalizationError, new_solver
from ringproof.proofs.ring.properties.base import Check
from ringproof.proofs.ring.session import Session
from ringproof.proofs.results import Verdict
from ringproof.schedules.expr import Term
from ringproof.schedules.shape import RING, Shape, require_parameters

SMALL_N = 24


@dataclass
class Outcome:
    check: Check
    verdict: Verdict
    seconds: float
    reason: str = ""
    n: int | None = None
    m: int | None = None
    d: int | None = None
    iterations: list = field(default_factory=list)
    lemmas: set = field(default_factory=set)
    side_conditions: int = 0                     # range facts the lemmas rested on (cached ones too)
    stats: dict = field(default_factory=dict)    # Z3 statistics of the query
    cross: dict | None = None                    # a second solver's answer (on an unsat query)
    smt2: str | None = None                      # where the query was written as SMT-LIB 2


def discharge(check: Check, session: Session | None = None, m_value: int | None = None,
              min_m: int = 1, smt2_dir: str | None = None) -> Outcome:
    """Decide one check under the session's budget (None: a fresh session under the default
    budget), for m = `m_value` if given, else for every m ≥ `min_m`. `smt2_dir` also writes the
    query as SMT-LIB 2; the budget's second solver ('cvc5') is asked about every unsat."""
    stop_if_requested()
    t0 = time.perf_counter()
    session = session if session is not None else Session()
    budget = session.budget
    try:
        ctx, its, hyps, g = _translate(check, session, m_value, min_m)
    except LiteralBound as err:
        return _split(check, err.limit, t0, session, smt2_dir)
    except NormalizationError as err:
        return Outcome(check, Verdict.UNKNOWN, time.perf_counter() - t0, f"not normalized: {err}")
    s = new_solver(budget)
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
    title = f"{check.phase}.{check.property}.{check.name}"
    text = smtlib.script(title, ctx.assumptions, hyps, z3.Not(g), ctx.instances) \
        if (smt2_dir or budget.second_solver) else None
    audit = {"side_conditions": ctx.side_conditions, "stats": smtlib.z3_statistics(s),
             "smt2": smtlib.write(smt2_dir, title, m_value, text) if smt2_dir else None}
    if r == z3.unsat:
        seconds = time.perf_counter() - t0          # Z3's time; the second solver reports its own
        cross = smtlib.check_with_cvc5(text, budget.second_timeout_ms) if budget.second_solver else None
        return Outcome(check, Verdict.PROVED, seconds, lemmas=ctx.lemmas_used, cross=cross, **audit)
    if r != z3.sat:
        return Outcome(check, Verdict.UNKNOWN, time.perf_counter() - t0,
                       f"z3 {r}: {s.reason_unknown()}", **audit)
    model = _smallest(s, ctx, m_value) or _sat(s)[1]    # its checks replaced the first model
    if model is None:
        return Outcome(check, Verdict.UNKNOWN, time.perf_counter() - t0,
                       f"z3 found a counterexample but not again: {s.reason_unknown()}")
    model = _least(s, ctx, its, model)
    n, m, d = (model.eval(x, model_completion=True).as_long()
               for x in (ctx.k * ctx.m, ctx.m, ctx.kd * ctx.m))
    return Outcome(check, Verdict.REFUTED, time.perf_counter() - t0, n=n, m=m, d=d,
                   iterations=_decode(ctx, its, model), **audit)


def _translate(check: Check, session: Session, m_value, min_m: int):
    """The check's query in digits: indices over n split in radix m, or, where that leaves the
    fragment, in blocks of k (contiguous layouts: `Ctx(block_split=True)`); the first reason is
    kept when neither normalizes. A literal that only the block split meets (`LiteralBound`) is
    raised from it, so the query is split on m as the radix-m one would be. The schedule's side
    condition joins the assumptions."""
    def build(block_split: bool):
        ctx = Ctx(m_value, session, shape=check.shape, min_m=min_m, block_split=block_split, chunk=check.chunk)
        if check.requires is not None:
            ctx.assumptions.append(ctx.cond(check.requires))
        its, hyp, goal = check.build(ctx)
        return ctx, its, [ctx.cond(h) for h in hyp], ctx.cond(goal)

    try:
        return build(False)
    except LiteralBound:
        raise
    except NormalizationError as first:
        try:
            return build(True)
        except LiteralBound:
            raise
        except NormalizationError:
            raise first from None


def small_sizes(shape: Shape, limit: int = SMALL_N):
    """(n, d, m) of `shape` with each free size ≤ limit, smallest first: by n + d, then n, then m."""
    return sorted(((n, d, m) for n, m, d in shape.sizes(limit)), key=lambda t: (t[0] + t[1], t[0], t[2]))


def _split(check: Check, limit: int, t0: float, session: Session, smt2_dir: str | None) -> Outcome:
    """A check whose formulas compare with a literal below `limit`: decided for m ≥ limit (where
    the literal lies within m of 0) and for each m < limit exactly (m fixed: plain linear
    arithmetic); refuted at the smallest (n, m) of any part, proved only if every part is."""
    parts = [discharge(check, session, None, min_m=limit, smt2_dir=smt2_dir)]
    parts += [discharge(check, session, m, smt2_dir=smt2_dir) for m in range(1, limit)]
    seconds = time.perf_counter() - t0
    refuted = sorted((o for o in parts if o.verdict is Verdict.REFUTED), key=lambda o: (o.n, o.m))
    if refuted:
        return replace(refuted[0], seconds=seconds)
    unknown = [o for o in parts if o.verdict is not Verdict.PROVED]
    if unknown:
        return replace(unknown[0], seconds=seconds, reason=f"split at m < {limit}: {unknown[0].reason}")
    return Outcome(check, Verdict.PROVED, seconds, lemmas=set().union(*(o.lemmas for o in parts)),
                   side_conditions=sum(o.side_conditions for o in parts))


def _sat(s: z3.Solver, *extra):
    s.push()
    s.add(*extra)
    r = s.check()
    model = s.model() if r == z3.sat else None
    s.pop()
    return r, model


require_parameters("smt._smallest (n, d as extents)", ("n", RING, "k", "d", "kd"))


def _smallest(s: z3.Solver, ctx: Ctx, m_value):
    """A model with the smallest sizes (n + d, then n, then m) up to SMALL_N, if there is one; with
    m fixed, the smallest k at any size (galloping, then bisection on k)."""
    for n, d, m in small_sizes(ctx.shape, SMALL_N // len(ctx.shape.free)):   # SMALL_N shared by the free sizes
        if m_value is not None and m != m_value:
            continue
        extra = [ctx.m == m] + [ctx.env[e.blocks].r == {"n": n, "d": d}[e.name] // m for e in ctx.shape.extents]
        model = _sat(s, *extra)[1]
        if model is not None:
            return model
    if m_value is None:
        return None
    lo, hi = SMALL_N // m_value + 1, 2 * (SMALL_N // m_value + 1)
    while _sat(s, ctx.k <= hi)[0] == z3.unsat and hi < 2 ** 40:
        lo, hi = hi + 1, 2 * hi
    while lo < hi:
        mid = (lo + hi) // 2
        r, _ = _sat(s, ctx.k <= mid)
        if r == z3.unknown:
            return None
        lo, hi = (lo, mid) if r == z3.sat else (mid + 1, hi)
    return _sat(s, ctx.k == lo)[1]


def _index_terms(ctx: Ctx, its: dict) -> list:
    """The Z3 terms of the counterexample's indices, in the order `_decode` prints them."""
    out = []
    for it in its.values():
        if isinstance(it, It):
            out += [ctx.int_term(ctx.val(it.idx[name])) for name in it.phase.index_names]
        elif isinstance(it, list):
            out += [ctx.int_term(ctx.val(t)) for t in it if isinstance(t, Term)]
    return out


def _least(s: z3.Solver, ctx: Ctx, its: dict, model):
    """`model` with its sizes kept and each index, in `_decode`'s order, the least the query allows
    once the ones before are fixed (descending until unsat): the lexicographically least failing
    iterations at that size. An index whose descent Z3 cannot decide stays where it is."""
    fixed = [x == model.eval(x, model_completion=True) for x in (ctx.k, ctx.m, ctx.kd)]
    for term in _index_terms(ctx, its):
        value = model.eval(term, model_completion=True)
        while True:
            r, lower = _sat(s, *fixed, term < value)
            if r != z3.sat:
                break
            model, value = lower, lower.eval(term, model_completion=True)
        fixed.append(term == value)
    return model


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
