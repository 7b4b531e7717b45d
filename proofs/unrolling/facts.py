"""Z3 proofs of the facts about the unrolling formulas (model/unrolling/utilization.py) that a user relies on.

Each fact is a record (name, statement, builder); `prove` checks it in a fresh context with a fixed
seed and timeout. ceil(D / D_u) is a fresh integer q with D_u (q - 1) < D <= D_u q, so the queries
need no division. Divisibility is stated with an explicit witness m (D = D_u m), never as a
forall-exists query. Besides the FACTS (expected PROVED) there are MISREADINGS: literal readings of
the garbled paper text, expected REFUTED, each with its smallest counterexample.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import z3

from ringproof.model.unrolling.utilization import LOOPS, MOVING, needs
from ringproof.proofs.results import Verdict


@dataclass(frozen=True)
class FactResult:
    name: str
    statement: str
    verdict: Verdict
    seconds: float
    reason: str = ""
    counterexample: tuple[tuple[str, int], ...] = field(default=())  # plain ints, by variable name

    def as_dict(self) -> dict:
        return {"name": self.name, "statement": self.statement, "verdict": self.verdict.value,
                "seconds": round(self.seconds, 3), "reason": self.reason,
                "counterexample": dict(self.counterexample) or None}


@dataclass(frozen=True)
class Fact:
    """A claim under assumptions over integer variables; `build(ctx)` -> (ints, assumptions, claim).

    `uses` names the facts whose instances appear among the assumptions (a chain of small lemmas).
    """

    name: str
    statement: str
    build: Callable
    uses: tuple[str, ...] = ()


class _Vars:
    """Integer variables of one query, created in its own context, remembered for counterexamples."""

    def __init__(self, ctx):
        self.ctx, self.ints = ctx, {}

    def int(self, name: str, low: int | None = 1):
        v = z3.Int(name, self.ctx)
        self.ints[name] = v
        return v, ([] if low is None else [v >= low])

    def ceil(self, d, u, name: str):
        """q = ceil(d / u) for u >= 1, as linear-in-q bounds."""
        q, _ = self.int(name, None)
        return q, [u * (q - 1) < d, d <= u * q]


def _needs(v: _Vars, f: dict):
    """ringproof.model.unrolling.utilization.needs on symbolic SU factors f, precision p and stride."""
    return needs(*(f[loop] for loop in LOOPS), v.ints["stride"], v.ints["p"])


def _su(v: _Vars):
    """Symbolic SU factors, precision p and stride, all >= 1."""
    hyp, f = [], {}
    for loop in LOOPS:
        f[loop], h = v.int(f"{loop}_u")
        hyp += h
    for name in ("p", "stride"):
        hyp += v.int(name)[1]
    return f, hyp


def _positive(v: _Vars, names):
    hyp, out = [], {}
    for name in names:
        out[name], h = v.int(name)
        hyp += h
    return out, hyp


def _temp(need, bw, loop, ctx):
    """min(1, BW_x / need_x over the operands that move when `loop` is innermost)."""
    out = z3.RealVal(1, ctx)
    for x in MOVING[loop]:
        r = z3.ToReal(bw[x]) / z3.ToReal(need[x])
        out = z3.If(r < out, r, out)
    return out


def _abstract_needs(v: _Vars):
    """Needs and bandwidths as integers >= 1 (needs-positive justifies it for the needs)."""
    need, h1 = _positive(v, ("need_W", "need_I", "need_O"))
    bw, h2 = _positive(v, ("BW_W", "BW_I", "BW_O"))
    strip = lambda d: {k[-1]: x for k, x in d.items()}
    return strip(need), strip(bw), h1 + h2


def _loop_nest(v: _Vars):
    """Bounds D, unrollings U and ceil(D/U) of the 7 loops."""
    hyp, D, U, Q = [], [], [], []
    for loop in LOOPS:
        d, h1 = v.int(loop)
        u, h2 = v.int(f"{loop}_u")
        q, h3 = v.ceil(d, u, f"ceil_{loop}")
        D.append(d), U.append(u), Q.append(q)
        hyp += h1 + h2 + h3
    return D, U, Q, hyp


def _pe_bounds(ctx):
    v = _Vars(ctx)
    D, U, Q, hyp = _loop_nest(v)
    num, den = z3.Product(*D), z3.Product(*[u * q for u, q in zip(U, Q)])
    return v.ints, hyp, z3.And(num > 0, num <= den)


def _pe_one(ctx):
    v = _Vars(ctx)
    D, U, Q, hyp = _loop_nest(v)
    num, den = z3.Product(*D), z3.Product(*[u * q for u, q in zip(U, Q)])
    return v.ints, hyp, (num == den) == z3.And(*[d == u * q for d, u, q in zip(D, U, Q)])


def _exact_iff_divides(ctx):
    v = _Vars(ctx)
    x, hyp = _positive(v, ("D", "D_u", "m"))
    d, u, m = x["D"], x["D_u"], x["m"]
    q, h = v.ceil(d, u, "ceil_D")
    # D = D_u q makes m := q a witness of D_u | D; conversely any witness m forces D = D_u q
    return v.ints, hyp + h, z3.Implies(d == u * m, d == u * q)


def _ceil_unique(ctx):
    v = _Vars(ctx)
    x, hyp = _positive(v, ("D", "D_u"))
    q, h1 = v.ceil(x["D"], x["D_u"], "q")
    q2, h2 = v.ceil(x["D"], x["D_u"], "q'")
    return v.ints, hyp + h1 + h2, q == q2


def _needs_positive(ctx):
    v = _Vars(ctx)
    f, hyp = _su(v)
    need = _needs(v, f)
    return v.ints, hyp, z3.And(*[n >= 1 for n in need.values()])


def _temporal_bounds(ctx):
    v = _Vars(ctx)
    need, bw, hyp = _abstract_needs(v)
    claims = []
    for loop in MOVING:
        t = _temp(need, bw, loop, ctx)
        fits = z3.And(*[need[x] <= bw[x] for x in MOVING[loop]])
        claims.append(z3.And(t > 0, t <= 1, (t == 1) == fits))
    return v.ints, hyp, z3.And(*claims)


def _total_bounds(ctx):
    v = _Vars(ctx)
    need, bw, hyp = _abstract_needs(v)
    x, h = _positive(v, ("prod_D", "prod_D_u_ceil"))
    hyp += h + [x["prod_D"] <= x["prod_D_u_ceil"]]  # pe-utilization-in-(0,1]
    pe = z3.ToReal(x["prod_D"]) / z3.ToReal(x["prod_D_u_ceil"])
    totals = [pe * _temp(need, bw, loop, ctx) for loop in MOVING]
    return v.ints, hyp, z3.And(*[z3.And(t > 0, t <= 1) for t in totals])


def _matmul_cast(ctx, literal: bool):
    v = _Vars(ctx)
    x, hyp = _positive(v, ("H", "sqrtP", "Q", "R"))
    H, side, Q, R = x["H"], x["sqrtP"], x["Q"], x["R"]
    C, K = (H * Q, H * R) if literal else (Q, R)  # loop bounds per group
    macs = H * K * C * side * side * 1 * 1
    return v.ints, hyp, macs == H * (side * side) * Q * R


def _swap_symmetry(ctx):
    v = _Vars(ctx)
    f, hyp = _su(v)
    x, h = _positive(v, ("Ox=Oy", "Fx=Fy"))
    hyp += h
    q = {}
    for loop, bound in (("Ox", "Ox=Oy"), ("Oy", "Ox=Oy"), ("Fx", "Fx=Fy"), ("Fy", "Fx=Fy")):
        q[loop], hq = v.ceil(x[bound], f[loop], f"ceil_{loop}")
        hyp += hq
    # the swapped SU's ceilings are ceil(Ox/Oy_u) = q[Oy] etc. by ceil-unique
    swapped = {**f, "Ox": f["Oy"], "Oy": f["Ox"], "Fx": f["Fy"], "Fy": f["Fx"]}
    q2 = {"Ox": q["Oy"], "Oy": q["Ox"], "Fx": q["Fy"], "Fy": q["Fx"]}
    den = z3.Product(*[f[k] * q[k] for k in q])
    den2 = z3.Product(*[swapped[k] * q2[k] for k in q2])
    need, need2 = _needs(v, f), _needs(v, swapped)
    return v.ints, hyp, z3.And(den == den2, *[need[k] == need2[k] for k in need])


def _footprint_vs_sum(ctx):
    v = _Vars(ctx)
    x, hyp = _positive(v, ("Ox_u", "Oy_u", "Ox_u'", "Oy_u'", "Fx_u=Fy_u"))
    a, b, a2, b2, f = x.values()
    foot, foot2 = (a + f - 1) * (b + f - 1), (a2 + f - 1) * (b2 + f - 1)
    claim = z3.And(z3.Implies(a + b <= a2 + b2, foot <= foot2),
                   z3.Implies(f >= 2, (foot <= foot2) == (a + b <= a2 + b2)))
    return v.ints, hyp + [a * b == a2 * b2], claim


def _split_keeps_w_o(ctx):
    v = _Vars(ctx)
    f, hyp = _su(v)
    x, h = _positive(v, ("Ox_u'", "Oy_u'"))
    g = {**f, "Ox": x["Ox_u'"], "Oy": x["Oy_u'"]}
    need, need2 = _needs(v, f), _needs(v, g)
    return v.ints, hyp + h + [f["Ox"] * f["Oy"] == g["Ox"] * g["Oy"]], \
        z3.And(need["W"] == need2["W"], need["O"] == need2["O"])


def _pruning(ctx):
    """SU A (split a x b of least input need) against SU B (split a' x b' of the same product).

    By split-keeps-W-and-O the two SUs share the W and O needs; the other five loops' PE factors are
    equal, so only the Ox, Oy factors of the PE utilization differ.
    """
    v = _Vars(ctx)
    need, bw, hyp = _abstract_needs(v)
    x, den, den2, h = _splits(v, divisible=True)
    hyp += h + [need["I"] <= x["need_I'"]]
    need2 = dict(need, I=x["need_I'"])
    claims = [_temp(need, bw, loop, ctx) * z3.ToReal(den2) >= _temp(need2, bw, loop, ctx) * z3.ToReal(den)
              for loop in MOVING]  # total(A) >= total(B)
    return v.ints, hyp, z3.And(*claims)


def _pruning_printed(ctx):
    """The paper's conditions only (Ox = Oy, Fx_u = Fy_u = f, stride 1): compare PE utilizations."""
    v = _Vars(ctx)
    x, den, den2, hyp = _splits(v, divisible=False)
    f, hf = v.int("Fx_u=Fy_u")
    a, b, a2, b2 = x["Ox_u"], x["Oy_u"], x["Ox_u'"], x["Oy_u'"]
    foot, foot2 = (a + f - 1) * (b + f - 1), (a2 + f - 1) * (b2 + f - 1)
    chosen = z3.Or(foot < foot2, z3.And(foot == foot2, a - b <= a2 - b2))  # enumerate_sus's rule
    hyp += hf + [x["Ox"] == x["Oy"], a >= b, a2 >= b2, chosen]
    return v.ints, hyp, den <= den2  # PE(A) >= PE(B)


def _splits(v: _Vars, divisible: bool):
    """Splits (Ox_u, Oy_u) and (Ox_u', Oy_u') of one product; the Ox, Oy denominators of PE_ut."""
    names = ("Ox_u", "Oy_u", "Ox_u'", "Oy_u'", "Ox", "Oy") + (("need_I'",) if divisible else ())
    x, hyp = _positive(v, names)
    hyp.append(x["Ox_u"] * x["Oy_u"] == x["Ox_u'"] * x["Oy_u'"])
    q = {}
    for u, d in (("Ox_u", "Ox"), ("Oy_u", "Oy"), ("Ox_u'", "Ox"), ("Oy_u'", "Oy")):
        q[u], hq = v.ceil(x[d], x[u], f"ceil({d}/{u})")
        hyp += hq
        if divisible:  # exact-iff-divides: D_u | D makes D = D_u * ceil(D / D_u)
            hyp.append(x[d] == x[u] * q[u])
    den = x["Ox_u"] * q["Ox_u"] * x["Oy_u"] * q["Oy_u"]
    den2 = x["Ox_u'"] * q["Ox_u'"] * x["Oy_u'"] * q["Oy_u'"]
    return x, den, den2, hyp


FACTS = (
    Fact("exact-iff-divides",
         "D = D_u*ceil(D/D_u) iff D_u divides D (a witness m with D = D_u*m forces m = ceil(D/D_u))",
         _exact_iff_divides),
    Fact("ceil-unique", "D_u*(q-1) < D <= D_u*q has one solution q: the encoding of ceil is a function",
         _ceil_unique),
    Fact("pe-utilization-in-(0,1]",
         "0 < prod D <= prod D_u*ceil(D/D_u) over the 7 loops: PE utilization lies in (0, 1]", _pe_bounds),
    Fact("pe-utilization-one-iff-divides",
         "PE utilization = 1 iff D = D_u*ceil(D/D_u) for every loop, i.e. iff every D_u divides its D",
         _pe_one, ("exact-iff-divides",)),
    Fact("needs-positive", "W, I and O bandwidth needs are >= 1 bit for every SU, precision and stride",
         _needs_positive),
    Fact("temporal-utilization-in-(0,1]",
         "for innermost C, K, Ox/Oy and G: 0 < temp_ut <= 1, and temp_ut = 1 iff every moving operand's "
         "need fits its bandwidth", _temporal_bounds, ("needs-positive",)),
    Fact("total-utilization-in-(0,1]",
         "PE utilization x temporal utilization lies in (0, 1] for every innermost loop", _total_bounds,
         ("pe-utilization-in-(0,1]", "needs-positive")),
    Fact("matmul-cast-macs",
         "H products (P x Q)(Q x R) as G = H, per-group C = Q, K = R, Ox = Oy = sqrt(P), Fx = Fy = 1 "
         "have H*P*Q*R MACs", lambda ctx: _matmul_cast(ctx, literal=False)),
    Fact("swap-symmetry",
         "with Ox = Oy and Fx = Fy, swapping (Ox_u, Fx_u) with (Oy_u, Fy_u) keeps PE utilization and "
         "every bandwidth need, so requiring Ox_u >= Oy_u loses no optimum", _swap_symmetry, ("ceil-unique",)),
    Fact("footprint-vs-sum",
         "Fx_u = Fy_u, Ox_u*Oy_u fixed: a smaller Ox_u+Oy_u never has a larger input footprint, and for "
         "Fx_u >= 2 the two orders agree", _footprint_vs_sum),
    Fact("split-keeps-W-and-O",
         "two SUs that differ only in the split of Ox_u*Oy_u have the same W and O bandwidth needs",
         _split_keeps_w_o),
    Fact("pruning-keeps-optimum",
         "if Ox_u, Oy_u, Ox_u', Oy_u' divide Ox, Oy, the least-footprint split has total utilization >= "
         "any other split of Ox_u*Oy_u, for every innermost loop", _pruning,
         ("exact-iff-divides", "needs-positive", "split-keeps-W-and-O")),
)

MISREADINGS = (
    Fact("matmul-cast-literal",
         "reading 'C = H, Q, K = H, R' as per-group loop bounds C = H*Q, K = H*R keeps H*P*Q*R MACs",
         lambda ctx: _matmul_cast(ctx, literal=True)),
    Fact("pruning-under-printed-conditions",
         "under only Ox = Oy, Fx_u = Fy_u and stride 1 (section II-B1) the split pruning keeps (least "
         "footprint, Ox_u >= Oy_u, ties to the squarer) never has a lower PE utilization (nor, with ample bandwidth, a lower total)", _pruning_printed),
)


SEARCH_BOUND = 8  # when the unbounded query is unknown, look for counterexamples with |variables| <= this
SHRINK_STEP_MS = 5000  # each tightening step of a counterexample; a timeout ends the shrinking


def prove(fact: Fact, timeout_ms: int = 20000, seed: int = 0, shrink: bool = True) -> FactResult:
    """Check `fact` in a fresh context: vacuity first, then the negated claim.

    A counterexample is shrunk (if `shrink`) toward the least max |variable|; an unknown unbounded query falls back to
    a bounded counterexample search, and stays UNKNOWN if that finds none.
    """
    start = time.perf_counter()
    ctx = z3.Context()
    ints, hyp, claim = fact.build(ctx)

    def solver(*extra, ms=timeout_ms):
        s = z3.Solver(ctx=ctx)
        s.set(timeout=ms, random_seed=seed)
        s.add(*hyp, *extra)
        return s

    def done(verdict, reason="", cex=()):
        return FactResult(fact.name, fact.statement, verdict, time.perf_counter() - start, reason, cex)

    base = solver()
    status = base.check()
    if status == z3.unsat:
        return done(Verdict.UNKNOWN, "assumptions unsatisfiable: the claim would hold vacuously")
    if status == z3.unknown:
        return done(Verdict.UNKNOWN, f"vacuity check: {base.reason_unknown()}")
    s = solver(z3.Not(claim))
    status = s.check()
    if status == z3.unsat:
        return done(Verdict.PROVED)
    if status == z3.sat:
        model = s.model()
    else:
        model = next((b.model() for bound in range(1, SEARCH_BOUND + 1)
                      for b in [solver(z3.Not(claim), *_box(ints, bound))] if b.check() == z3.sat), None)
    if model is not None and not shrink:
        return done(Verdict.REFUTED, "counterexample (not shrunk)", _plain(model, ints))
    if model is not None:
        return _shrink(lambda *extra: solver(*extra, ms=SHRINK_STEP_MS), claim, ints, model, done)
    return done(Verdict.UNKNOWN, f"{s.reason_unknown()}; no counterexample with |variables| <= {SEARCH_BOUND}")


def _box(ints, bound):
    return [z3.And(x <= bound, x >= -bound) for x in ints.values()]


def _shrink(solver, claim, ints, model, done) -> FactResult:
    """Refutation with the counterexample of least max |variable|: tighten the box until unsat."""
    found = _plain(model, ints)
    while True:
        bound = max(abs(val) for _, val in found) - 1
        s = solver(z3.Not(claim), *_box(ints, bound))
        status = s.check() if bound >= 0 else z3.unsat
        if status == z3.sat:
            found = _plain(s.model(), ints)
            continue
        least = "least" if status == z3.unsat else "not known to be least"
        return done(Verdict.REFUTED, f"counterexample of {least} max |variable| = {bound + 1}", found)


def _plain(model, ints) -> tuple[tuple[str, int], ...]:
    return tuple((n, model.eval(x, model_completion=True).as_long()) for n, x in ints.items())


def prove_all(facts=FACTS, timeout_ms: int = 20000, shrink: bool = True) -> list[FactResult]:
    return [prove(f, timeout_ms, shrink=shrink) for f in facts]
