"""Checked counting hints: closed forms for loop sums the counter (`nests`) cannot close.

Both are proved for all n = k·m, m ≥ 1 with the normalization of `ringproof.proofs.ring.normalize` (digit forms of
mod/div), here in its nonlinear mode: a count multiplies values (e.g. (V div m)·⌊m²/4⌋), so the
final identity goes to Z3's nonlinear integer solver. `True` means proved; `False` comes with the
values Z3 found; `None` (unknown, timeout, outside the normalization) never counts as proved.

- `prove_through(phase)`: the outermost loop's hint T(V) = cycles of its iterations lo..V, by
  induction: lo ≤ hi, T(lo) = c(lo) and T(V) − T(V−1) = c(V) for lo < V ≤ hi, where c(V) is the
  cycles of the inner loops at V (their extents, proved ≥ 0). Then the phase takes T(hi) cycles.
"""

from __future__ import annotations

from types import SimpleNamespace


import z3

from ringproof.proofs.ring.iterations import new_var
from ringproof.proofs.ring.normalize import PARAMS, Ctx, NormalizationError
from ringproof.proofs.ring.session import Session
from ringproof.schedules.dsl import Phase
from ringproof.schedules.expr import eq, le, lift, var
from ringproof.schedules.shape import D_IS_N, Shape

TRY_MS = 500           # tries: one per TRY_MS of the timeout (see _holds)


class Unsupported(Exception):
    """The phase's loops or guard are outside the shapes this module counts."""


def inner_extents(phase: Phase, v) -> list:
    """The extents of the loops inside the outermost one at its index v; each may depend only
    on the parameters and v (a rectangular nest under the outermost loop)."""
    outer = phase.loops[0].name
    out = []
    for lp in phase.loops[1:]:
        try:
            lo, hi = lp.bounds(PARAMS, SimpleNamespace(**{outer: v}))
        except AttributeError as e:
            raise Unsupported(f"loop {lp.name}'s bounds depend on an inner index ({e})") from None
        out.append(lift(hi) - lift(lo) + 1)
    return out


def _product(xs):
    total = lift(1)
    for x in xs:
        total = total * x
    return total


def _holds(ctx: Ctx, claim: z3.BoolRef, monomials: bool = False):
    """(True | False | None, model) for: claim follows from ctx's assumptions. `monomials`: the
    claim with both sides as sums of monomials (Z3's simplifier, som: an equivalent formula), asked
    in a Z3 context of its own, so that the process's context (and so any counter-model asked of it
    later) is what it would be without this query.

    Z3's nonlinear core varies several-fold with the seed and the order of the query's terms on
    these identities, so the query runs under successive seeds from the budget's, each with the
    budget's induction rlimit: which seed answers does not depend on the load. The number of tries
    is fixed by the budget's timeout (one per TRY_MS) and each try's wall clock is only a backstop:
    a shared deadline made a count `unknown` on a loaded machine (algo2's cycles under load 10)."""
    budget = ctx.session.budget
    seed, timeout_ms = budget.seed, budget.timeout_ms
    assumptions = ctx.assumptions
    if monomials:
        world = z3.Context()
        assumptions = [a.translate(world) for a in assumptions]
        claim = z3.simplify(claim.translate(world), som=True)
    for attempt in range(max(1, timeout_ms // TRY_MS)):
        s = z3.SolverFor("QF_NIA", ctx=claim.ctx)
        s.set("rlimit", budget.induction_rlimit)
        s.set("timeout", timeout_ms)             # backstop only, per try: not shared by the tries
        s.set("random_seed", seed + attempt)
        s.add(*assumptions)
        s.add(z3.Not(claim))
        r = s.check()
        if r == z3.unsat:
            return True, None
        if r == z3.sat:
            return False, s.model()
    return None, None


def _at(model, ctx: Ctx, what: str) -> str:
    k, m = (model.eval(x, model_completion=True).as_long() for x in (ctx.k, ctx.m))
    return f"{what} fails at n={k * m}, m={m}"


def prove_through(phase: Phase, session: Session | None = None, shape: Shape = D_IS_N) -> tuple:
    """(verdict, message) for the outermost loop's `through` hint (see the module doc), under the
    session's budget (None: the shared default); `shape`: the schedule's free sizes."""
    lp = phase.loops[0]
    if lp.through is None:
        return None, "no hint"
    name = lp.name
    lo, hi = (lift(b) for b in lp.bounds(PARAMS, SimpleNamespace()))
    try:
        for what in ("base", "step"):
            ctx = Ctx(session=session, nonlinear=True, shape=shape)
            if what == "base" and not ctx.prove(ctx.cond(le(lo, hi))):
                return None, f"cannot prove loop {name} is non-empty ({lo} ≤ {hi})"
            new_var(ctx, name, lo, hi)          # canonical digits of V over the whole range
            v = var(name)
            ctx.assumptions.append(ctx.cond(eq(v, lo) if what == "base" else le(lo + 1, v)))
            extents = inner_extents(phase, v)
            for e in extents:
                if not ctx.prove(ctx.cond(le(0, e))):
                    return None, f"cannot prove extent {e} ≥ 0"
            here = lift(lp.through(PARAMS, v))
            if what == "base":
                lhs = here
            else:
                lhs = here - lift(lp.through(PARAMS, v - 1))
            claim = ctx.int_term(ctx.val(lhs)) == ctx.int_term(ctx.val(_product(extents)))
            # First as sums of monomials: Z3's nonlinear core settles algo2's step so at the first
            # seed, where the products as written ran out of their rlimit twice. A failure, or no
            # answer, is asked of the identity as written, whose counter-model names the size.
            ok, model = _holds(ctx, claim, monomials=True)
            if ok is not True:
                ok, model = _holds(ctx, claim)
            if ok is not True:
                return ok, (_at(model, ctx, f"hint {what}") if ok is False
                            else f"hint {what}: z3 gave no answer")
    except (NormalizationError, Unsupported) as e:
        return None, str(e)
    return True, ""
