"""The lower bound on T of the bit-level machine as a closed form in n, m, d, proved for every n, d
and every m | n (docs/optimal.md §1).

The bound is the sum of the phase minima of lemmas L1-L3 (`BitProblem.phase_minimum`): phase 1
max(⌈c1/m⌉, d), phase 2 max(⌈c2/m⌉, max_i r_i + K(r_i, m)), phase 3 max(⌈c3/m⌉, n), with c_k the
op counts, r_i the EACs of row i and K(r, m) the least K with Σ_{c=1..K} min(m, c+1) ≥ r (L2b).
`prove_bound(variant)` proves, lemma by lemma, that this sum equals `CLOSED[variant]`, a
sympy-readable string, for all integers n, d ≥ 1, m ≥ 1 with m | n. Each lemma's own check is
Z3 (for all integers or reals) or sympy; the last one, the equality, takes the others as its
hypotheses, named in `rests_on` (the help given to Z3, each piece proved on its own).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import sympy as sp
import z3

from ringproof.errors import BadInput
from ringproof.model.bitlevel.problem import BitProblem
from ringproof.model.bitlevel.types import VARIANTS
from ringproof.proofs.ring.budgets import BOUND_LEMMA
from ringproof.proofs.search.lower_bounds import op_counts, spread_fits, spread_step
from ringproof.proofs.search.to_z3 import ToZ3
from ringproof.proofs.search.validity import valid

n, m, d, k = sp.symbols("n m d k", integer=True, positive=True)

# K(n): the least K >= 0 with K(K+3)/2 >= n (lemma K-least proves the two agree for every n >= 1)
K_FORM = "ceiling((sqrt(8*n + 9) - 3)/2)"
_P1 = "ceiling(d*n*(n + 1)/(2*m))"
CLOSED = {
    "plain": "2*d*n**2/m + 2*n**2/m",
    "symmetric": f"{_P1} + 2*n**2/m + d*n**2/m",
    "masked": f"{_P1} + Max(n*(n + 1)/m, n + {K_FORM}) + Max({_P1}, n)",
}
# ops per phase (lemma L1-counts) and the longest accumulator of phases 1 and 3 (d and n terms)
COUNTS = {"plain": ("d*n**2", "2*n**2", "d*n**2"),
          "symmetric": ("d*n*(n + 1)/2", "2*n**2", "d*n**2"),
          "masked": ("d*n*(n + 1)/2", "n*(n + 1)", "d*n*(n + 1)/2")}


@dataclass(frozen=True)
class Step:
    """One lemma of the proof: what it says, how it was checked, what it rests on."""

    name: str
    statement: str
    method: str
    proved: bool
    seconds: float
    rests_on: tuple = ()


@dataclass
class BoundProof:
    variant: str
    bound: str
    proved: bool
    steps: list = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {"variant": self.variant, "bound": self.bound, "proved": self.proved,
                "seconds": round(self.seconds, 3),
                "lemmas": [{"name": s.name, "statement": s.statement, "method": s.method,
                            "proved": s.proved, "seconds": round(s.seconds, 3),
                            "rests_on": list(s.rests_on)} for s in self.steps]}


def _valid(claim, hyps=()) -> bool:
    return valid(claim, hyps, rlimit=BOUND_LEMMA)


def _timed(name, statement, method, check, rests_on=()) -> Step:
    start = time.perf_counter()
    ok = bool(check())
    return Step(name, statement, method, ok, time.perf_counter() - start, tuple(rests_on))


# ------------------------------------------------------------------ from the rules to the arithmetic


def slots() -> Step:
    """L1: a phase of L cycles holds at most m·L ops (one op per PE and cycle, each op once), so
    L ≥ ⌈c/m⌉, and ⌈c/m⌉ is the least such integer."""
    c, mm, L, q = z3.Ints("c m L q")
    ceil_q = z3.And(mm * (q - 1) < c, c <= mm * q)
    claim = z3.And(L >= q, z3.Implies(L == q - 1, mm * L < c))
    return _timed("L1-slots", "m·L ≥ c for a phase of L cycles and c ops on m PEs ⇔ L ≥ ⌈c/m⌉",
                  "z3", lambda: _valid(claim, [mm >= 1, c >= 0, L >= 0, mm * L >= c, ceil_q]))


def arc_growth() -> Step:
    """L2b by induction on c: c cycles after its last EAC a row sum is on at most min(m, c+1) PEs
    (base: one PE at c = 0; step: L2b-step adds at most one PE per cycle)."""
    mm, c, a, a1 = z3.Ints("m c a a1")
    base = z3.Implies(mm >= 1, 1 <= z3.If(mm < 1, mm, 1))
    step = z3.Implies(z3.And(mm >= 1, c >= 0, a <= z3.If(mm < c + 1, mm, c + 1), a1 <= a + 1, a1 <= mm),
                      a1 <= z3.If(mm < c + 2, mm, c + 2))
    return _timed("L2b-arc", "holders of a finished row sum after c cycles ≤ min(m, c+1) (induction on c)",
                  "z3", lambda: _valid(base) and _valid(step), ["L2b-step"])


def _S(mm, K):
    """Σ_{c=1..K} min(m, c+1) in closed form: K(K+3)/2 while K ≤ m − 1, then m per cycle."""
    head = z3.If(K <= mm - 1, K, mm - 1)
    return z3.If(K <= mm - 1, K * (K + 3) / 2, head * (head + 3) / 2 + (K - head) * mm)


def spread_sum() -> Step:
    """The DIV slots of a row in the K cycles after its sum is final: S_m(K) = Σ_{c=1..K} min(m, c+1),
    closed form by induction on K (S_m(0) = 0, S_m(K+1) = S_m(K) + min(m, K+2)); S_m(K) ≥ K."""
    mm, K = z3.Ints("m K")
    base = _S(mm, z3.IntVal(0)) == 0
    step = _S(mm, K + 1) == _S(mm, K) + z3.If(mm < K + 2, mm, K + 2)
    hyp = [mm >= 1, K >= 0]
    return _timed("L2b-sum", "S_m(K) = K(K+3)/2 for K ≤ m−1, (m−1)(m+2)/2 + (K−m+1)·m beyond; S_m(K) ≥ K",
                  "z3 (induction on K)",
                  lambda: _valid(base, [mm >= 1]) and _valid(step, hyp) and _valid(_S(mm, K) >= K, hyp))


def k_least() -> Step:
    """K(n) = ⌈(√(8n+9) − 3)/2⌉ is the least integer K ≥ 0 with K(K+3)/2 ≥ n, for every n ≥ 1."""
    nn, K = z3.Int("n"), z3.Int("K")
    r = z3.Real("r")                                # √(8n+9)
    x = (r - 3) / 2
    hyps = [nn >= 1, r >= 0, r * r == 8 * nn + 9, K - 1 < x, x <= K]   # K = ⌈x⌉
    claim = z3.And(K >= 0, K * (K + 3) >= 2 * nn, (K - 1) * (K + 2) < 2 * nn)
    return _timed("K-least", f"{K_FORM} is the least K ≥ 0 with K(K+3)/2 ≥ n (n ≥ 1)", "z3 (reals)",
                  lambda: _valid(claim, hyps))


def row_max() -> Step:
    """K(r, m) is nondecreasing in r, so max_i r_i + K(r_i, m) is taken by the longest row."""
    S = z3.Function("S", z3.IntSort(), z3.IntSort())
    r, r2, K, K2, j = z3.Ints("r r2 K K2 j")
    least = lambda K_, r_: z3.And(K_ >= 0, S(K_) >= r_, z3.ForAll([j], z3.Implies(z3.And(0 <= j, j < K_), S(j) < r_)))
    claim = K <= K2
    return _timed("L2b-row-max", "r ≤ r' ⇒ K(r, m) ≤ K(r', m) (any S), so the longest row bounds phase 2",
                  "z3", lambda: _valid(claim, [r <= r2, least(K, r), least(K2, r2)]))


def spread_at_n() -> Step:
    """K(n, m), the spread term of a row of n EACs, from the lemmas: for m = n it is K(n) (n ≥ 2:
    K(n) ≤ n − 1 = m − 1 by L2b-fits, where S_m(K) = K(K+3)/2; n = 1: S_1(K) = K, so 1, as K(1));
    for m < n, 1 ≤ K(n, m) ≤ n (S_m(K) ≥ K)."""
    mm, nn, K, Kn = z3.Ints("m n K Kn")
    # "K is the least K with S_m(K) >= n", instantiated where the proof needs it (at Kn and at n)
    least_S = lambda other: z3.And(K >= 0, _S(mm, K) >= nn, z3.Implies(other < K, _S(mm, other) < nn))
    least_tri = z3.And(Kn >= 0, Kn * (Kn + 3) >= 2 * nn, (Kn - 1) * (Kn + 2) < 2 * nn)
    same = z3.Implies(z3.And(mm == nn, nn >= 1, least_S(Kn), least_tri, z3.Implies(nn >= 2, Kn <= nn - 1)),
                      K == Kn)
    small = z3.Implies(z3.And(mm >= 1, nn >= 1, least_S(nn), least_S(z3.IntVal(0))), z3.And(1 <= K, K <= nn))
    return _timed("L2b-at-n", "K(n, n) = K(n); K(n, m) ∈ [1, n] for every m",
                  "z3", lambda: _valid(same) and _valid(small), ["L2b-sum", "K-least", "L2b-fits"])


def closed_form(variant: str) -> sp.Expr:
    return sp.sympify(CLOSED[variant], locals={"n": n, "m": m, "d": d})


def _over_k(e: sp.Expr) -> sp.Expr:
    """e with n = k·m put in and each quotient by m cancelled (exact: sympy's cancel), so Z3 sees
    polynomials where the division is exact."""
    return e.subs(n, k * m).replace(lambda x: x.is_Add or x.is_Mul, lambda x: sp.cancel(x))


def _phase_minima(variant, zn, zd, Ksp, tr):
    """L1-L3 as Z3 terms: the phase minima of the machine's lemmas, before any simplification."""
    ceil = [tr(sp.ceiling(_over_k(sp.sympify(c, locals={"n": n, "d": d}) / m))) for c in COUNTS[variant]]
    mx = lambda a, b: z3.If(a >= b, a, b)
    return mx(ceil[0], zd) + mx(ceil[1], zn + Ksp) + mx(ceil[2], zn)


def equality(variant: str) -> Step:
    """Σ phase minima (L1, L2b at the longest row, L3) = CLOSED[variant] for all n, d ≥ 1, m | n."""
    zn, zm, zd, zk, K, Ksp = z3.Ints("n m d k K Ksp")
    tr = ToZ3({"n": zn, "m": zm, "d": zd, "k": zk, "K": K})
    # K_FORM stands whole for the Int K of the hypotheses (K-least proves it is that K)
    closed = tr(_over_k(sp.sympify(CLOSED[variant].replace(K_FORM, "K"),
                                   locals={"n": n, "m": m, "d": d, "K": sp.Symbol("K")})))
    minima = _phase_minima(variant, zn, zd, Ksp, tr)
    hyps = [zm >= 1, zk >= 1, zd >= 1, zn == zk * zm,
            K >= 0, K * (K + 3) >= 2 * zn, (K - 1) * (K + 2) < 2 * zn,             # K-least
            z3.Implies(zn >= 2, K <= zn - 1),                                        # L2b-fits
            z3.Implies(zk == 1, Ksp == K), 1 <= Ksp, Ksp <= zn,                      # L2b-at-n
            zn >= zm] + tr.side                                                      # n-ge-m
    return _timed(f"closed-{variant}", f"L1 + L2 + L3 = {CLOSED[variant]} for all n, d ≥ 1, m | n",
                  "z3", lambda: _valid(minima == closed, hyps),
                  ["L1-counts", "L1-slots", "L2b-arc", "L2b-row-max", "L2b-at-n", "K-least", "L2b-fits",
                   "n-ge-m"])


def n_ge_m() -> Step:
    zn, zm, zk = z3.Ints("n m k")
    return _timed("n-ge-m", "m | n, n ≥ 1 ⇒ n ≥ m", "z3",
                  lambda: _valid(zn >= zm, [zm >= 1, zk >= 1, zn == zk * zm]))


def prove_bound(variant: str) -> BoundProof:
    """Every lemma of the bound of `variant`; `proved` only if each one is."""
    if variant not in VARIANTS:
        raise BadInput(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    start = time.perf_counter()
    steps = [_as_step(op_counts()), slots(), _as_step(spread_step()), arc_growth(), spread_sum(),
             row_max(), _as_step(spread_fits()), k_least(), spread_at_n(), n_ge_m(), equality(variant),
             enumerated(variant)]
    return BoundProof(variant, CLOSED[variant], all(s.proved for s in steps), steps,
                      time.perf_counter() - start)


def enumerated(variant: str, limit: int = 8) -> Step:
    """Cross-check: the closed form equals Σ `BitProblem.phase_minimum` (the lemmas as the search
    applies them, by enumeration of the op set) for every n ≤ limit, m | n, d ∈ {1, 2, 3} and d = n
    for n ≤ 6 (tests/test_bound.py goes further)."""
    def ok():
        return all(sum(BitProblem(variant, nn, mm, dd).phase_minimum()) == bound_value(variant, nn, mm, dd)
                   for nn in range(1, limit + 1) for mm in range(1, nn + 1) if nn % mm == 0
                   for dd in sorted({1, 2, 3} | ({nn} if nn <= 6 else set())))
    return _timed("enumerated", f"closed form = Σ BitProblem.phase_minimum for n ≤ {limit}, m | n, "
                  "d ∈ {1, 2, 3} (and d = n for n ≤ 6)", "enumeration", ok)


def _as_step(lemma) -> Step:
    return Step(lemma.name, lemma.statement, lemma.method, lemma.proved, lemma.seconds)


def bound_value(variant: str, nn: int, mm: int, dd: int | None = None) -> int:
    """The closed form at one size (exact, sympy)."""
    dd = nn if dd is None else dd
    value = closed_form(variant).subs({n: nn, m: mm, d: dd})
    if not value.is_Integer:
        raise BadInput(f"the bound of {variant} at n={nn}, m={mm}, d={dd} is {value}, not an integer "
                       "(m must divide n)")
    return int(value)
