"""How far the schedules' proved cycle counts lie from each other and from the proved lower bound
(docs/optimal.md §4): each statement a set of Z3 queries over the sympy closed forms, for all n with
m | n.

The cycle counts are `counting.counts(schedule).cycles` (derived from the loop nests, the forms the
prover reports); the bound is `bound.CLOSED` at d = n (the schedules' shape); nothing is sampled.
The help given to Z3 is a case split that sympy makes exact before Z3 sees it: each `Case` writes n
and m in fresh integers (n = 2h + p at m = n; m = 2u + a, k = 2v + b with n = k·m in general), and
`exact_forms.exact` turns each ⌊·⌋ and Mod it decides into a polynomial (each step checked). That the
cases cover the statement's domain and that each case's substitution is right are queries too. A
statement is `proved` only if every query's negation is unsat within the GAP limit (unknown, the
limit or the time backstop reached, is not proved); each query runs in a Z3 context of its own
(validity.valid), so the verdict does not depend on what the process asked before.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import sympy as sp
import z3

from ringproof.proofs.ring.budgets import GAP
from ringproof.proofs.figures.counting import M, N, counts
from ringproof.proofs.ring.session import Session
from ringproof.proofs.search.bound import CLOSED, K_FORM
from ringproof.proofs.search.exact_forms import exact
from ringproof.proofs.search.to_z3 import ToZ3
from ringproof.proofs.search.validity import valid

KN = sp.Symbol("K", integer=True, nonnegative=True)       # K(n): see bound.K_FORM and lemma K-least
H, U, V = sp.symbols("h u v", integer=True, nonnegative=True)
SECONDS = 60.0                                             # each query's wall-clock backstop


@dataclass(frozen=True)
class Gap:
    name: str
    statement: str
    proved: bool
    seconds: float


@dataclass(frozen=True)
class Case:
    """Sizes written in fresh integers: n, m and k = n/m as sympy forms in `least`'s symbols, each
    at least its value there; `when(n, m, k)` (Z3) is the sizes the case stands for and `values(n,
    m, k)` its symbols' values at them (integer division), so that the substitution is checked."""
    name: str
    n: sp.Expr
    m: sp.Expr
    k: sp.Expr
    least: tuple            # (symbol, its least value) pairs
    when: Callable
    values: Callable


def cycles(schedule, session: Session | None = None) -> sp.Expr:
    """The proved cycle count of a schedule (d = n); `session` keeps it for the next statement."""
    return counts(schedule, session).cycles


def bound_at_d_n(variant: str) -> sp.Expr:
    """The lower bound of `variant` at d = n, K(n) as the symbol K."""
    text = CLOSED[variant].replace(K_FORM, "K")
    return sp.sympify(text, locals={"n": N, "m": M, "d": N, "K": KN})


def _residues(a: int, b: int) -> Case:
    """m = 2u + a, k = 2v + b, n = k·m."""
    m, k = 2 * U + a, 2 * V + b
    return Case(f"m ≡ {a}, k ≡ {b} (mod 2)", sp.expand(m * k), m, k, ((U, 1 - a), (V, 1 - b)),
                lambda zn, zm, zk: z3.And(zm % 2 == a, zk % 2 == b),
                lambda zn, zm, zk: {"u": zm / 2, "v": zk / 2})


def _square(p: int) -> Case:
    """m = n = 2h + p."""
    return Case(f"m = n ≡ {p} (mod 2)", 2 * H + p, 2 * H + p, sp.Integer(1), ((H, 1 - p),),
                lambda zn, zm, zk: z3.And(zk == 1, zn % 2 == p),
                lambda zn, zm, zk: {"h": zn / 2})


BY_RESIDUES = [_residues(a, b) for a in (0, 1) for b in (0, 1)]     # every m | n
SQUARE = [_square(0), _square(1)]                                    # m = n
EVEN_SQUARE = [_square(0)]                                           # m = n even


def _check(name: str, statement: str, expr: sp.Expr, claim, domain, cases, session: Session | None = None) -> Gap:
    """Z3: for all m, k ≥ 1 (n = k·m) in `domain(n, m, k)`, `claim(term, n, m)` holds of `expr`:
    the cases cover the domain, each case's substitution is right, and the claim holds in each
    (`session`: where the exact forms of the cases are kept; a fresh one by default)."""
    start = time.perf_counter()
    session = session or Session()
    zn, zm, zk = z3.Ints("n m k")
    sizes = [zm >= 1, zk >= 1, zn == zk * zm]
    proved = _valid(z3.Or(*[c.when(zn, zm, zk) for c in cases]), sizes + list(domain(zn, zm, zk)))
    for case in cases:
        proved = proved and _substitution_holds(case, zn, zm, zk, sizes) and _claim_holds(case, expr, claim, domain, session)
    return Gap(name, statement, proved, time.perf_counter() - start)


def _substitution_holds(case: Case, zn, zm, zk, sizes) -> bool:
    """Where `case.when` holds, its symbols' values give back n, m and k and respect `least`."""
    env = case.values(zn, zm, zk)
    tr = ToZ3(env)
    back = [zn == tr(case.n), zm == tr(case.m), zk == tr(case.k)] + [env[str(s)] >= lo for s, lo in case.least]
    return _valid(z3.And(*back), sizes + [case.when(zn, zm, zk)])


def _claim_holds(case: Case, expr: sp.Expr, claim, domain, session: Session) -> bool:
    """The claim in the case's symbols, over the form that `exact` made of `expr` (once per form and
    case in the session: several statements share them)."""
    env = _symbols(case)
    tr = ToZ3(env)
    form = session.exact.get((expr, case))
    if form is None:
        form = session.exact[(expr, case)] = _exact_form(expr, case)
    term, n, m, k = tr(form), tr(case.n), tr(case.m), tr(case.k)
    zK = env["K"]
    least_K = [zK >= 0, zK * (zK + 3) >= 2 * n, (zK - 1) * (zK + 2) < 2 * n] if expr.has(KN) else []
    return _valid(claim(term, n, m), _ranges(case) + tr.side + list(domain(n, m, k)) + least_K)


def _exact_form(expr: sp.Expr, case: Case) -> sp.Expr:
    """`expr` in the case's symbols, each floor and Mod that the case decides made exact."""
    env = _symbols(case)

    def in_range(r, b):
        if r.is_number and b.is_number:
            return bool(0 <= r < b)
        tr = ToZ3(env)
        zr, zb = tr(r), tr(b)
        return _valid(z3.And(0 <= zr, zr < zb), _ranges(case) + tr.side)

    return sp.expand(exact(expr.subs({N: case.n, M: case.m}, simultaneous=True), in_range))


def _symbols(case: Case) -> dict:
    return {str(s): z3.Int(str(s)) for s, _ in case.least} | {"K": z3.Int("K")}


def _ranges(case: Case) -> list:
    return [z3.Int(str(s)) >= lo for s, lo in case.least]


def _valid(claim, hyps) -> bool:
    return valid(claim, hyps, rlimit=GAP, seconds=SECONDS)


EVERY = lambda zn, zm, zk: []           # noqa: E731  (every n, m with m | n)


def algo2_gaps(session: Session | None = None) -> list[Gap]:
    """algo2-fast against Algorithm 2 and against the symmetric bound (`session`: where the cycle
    counts are derived once; a fresh one by default)."""
    from ringproof.schedules.algo2 import ALGO2
    from ringproof.schedules.algo2_fast import ALGO2_FAST
    session = session or Session()

    diff = cycles(ALGO2, session) - cycles(ALGO2_FAST, session)
    gap = cycles(ALGO2_FAST, session) - bound_at_d_n("symmetric")
    square = lambda zn, zm, zk: [zk == 1]     # noqa: E731  (m = n)
    return [
        _check("algo2-fast <= algo2", "algo2-fast never takes more cycles than Algorithm 2 (every m | n)",
               diff, lambda t, zn, zm: t >= 0, EVERY, BY_RESIDUES, session),
        _check("algo2-fast < algo2", "algo2-fast takes fewer cycles than Algorithm 2 for every n ≥ 7 "
               "with 2 ≤ m | n", diff, lambda t, zn, zm: t > 0, lambda zn, zm, zk: [zn >= 7, zm >= 2], BY_RESIDUES, session),
        _check("algo2-fast = algo2 (m = 1)", "algo2-fast takes as many cycles as Algorithm 2 when m = 1 (every n)",
               diff, lambda t, zn, zm: t == 0, lambda zn, zm, zk: [zm == 1], BY_RESIDUES, session),
        _check("algo2-fast <= algo2 (m = n)", "algo2-fast never takes more cycles than Algorithm 2 when m = n",
               diff, lambda t, zn, zm: t >= 0, square, SQUARE, session),
        _check("algo2-fast < algo2 (m = n)", "algo2-fast takes fewer cycles than Algorithm 2 for every n ≥ 5 "
               "when m = n", diff, lambda t, zn, zm: t > 0, lambda zn, zm, zk: [zk == 1, zn >= 5], SQUARE, session),
        _check("algo2-fast gap", "algo2-fast − bound = n²/(2m) for even n, 0 for odd n (every m | n)",
               gap, lambda t, zn, zm: z3.If(zn % 2 == 0, 2 * zm * t == zn * zn, t == 0), EVERY, BY_RESIDUES, session),
        _check("algo2 gap (m = n)", "Algorithm 2 − bound = [n even]·n/2 + H(H − 1)/2 with H = ⌊(n − 1)/2⌋ "
               "when m = n", cycles(ALGO2, session) - bound_at_d_n("symmetric"), _algo2_gap, square, SQUARE, session),
    ]


def _algo2_gap(t, zn, zm):
    """2t = [n even]·n + H(H − 1), H = ⌊(n − 1)/2⌋ (Z3's integer division, n ≥ 1)."""
    big_h = (zn - 1) / 2
    return 2 * t == z3.If(zn % 2 == 0, zn, 0) + big_h * (big_h - 1)


def algo2_even_gaps(session: Session | None = None) -> list[Gap]:
    """algo2-even (even n = m) against the symmetric bound and against algo2-fast."""
    from ringproof.schedules.algo2_even import ALGO2_EVEN
    from ringproof.schedules.algo2_fast import ALGO2_FAST
    session = session or Session()

    even_square = lambda zn, zm, zk: [zk == 1, zn % 2 == 0]     # noqa: E731  (its side condition)
    return [
        _check("algo2-even gap", "algo2-even meets the symmetric bound for every even n = m",
               cycles(ALGO2_EVEN, session) - bound_at_d_n("symmetric"), lambda t, zn, zm: t == 0,
               even_square, EVEN_SQUARE, session),
        _check("algo2-even < algo2-fast", "algo2-even takes n/2 cycles fewer than algo2-fast for every even n = m",
               cycles(ALGO2_FAST, session) - cycles(ALGO2_EVEN, session), lambda t, zn, zm: 2 * t == zn,
               even_square, EVEN_SQUARE, session),
    ]


def algo3_gaps(session: Session | None = None) -> list[Gap]:
    """Algorithm 3 against the masked bound at m = n: [n even]·n + n − K(n)."""
    from ringproof.schedules.algo3 import ALGO3
    session = session or Session()

    gap = cycles(ALGO3, session) - bound_at_d_n("masked")
    return [_check("algo3 gap (m = n)", "Algorithm 3 − bound = [n even]·n + n − K(n) for m = n",
                   gap, lambda t, zn, zm: t == z3.If(zn % 2 == 0, zn, 0) + zn - z3.Int("K"),
                   lambda zn, zm, zk: [zk == 1], SQUARE, session)]


def algo3_fast_gaps(session: Session | None = None) -> list[Gap]:
    """algo3-fast (n = m ≥ 3) against Algorithm 3 and against the masked bound."""
    from ringproof.schedules.algo3 import ALGO3
    from ringproof.schedules.algo3_fast import ALGO3_FAST
    session = session or Session()

    its_sizes = lambda zn, zm, zk: [zk == 1, zn >= 3]     # noqa: E731  (its side condition)
    fast = cycles(ALGO3_FAST, session)
    return [
        _check("algo3-fast < algo3", "algo3-fast takes one cycle fewer than Algorithm 3 for every n = m ≥ 3",
               cycles(ALGO3, session) - fast, lambda t, zn, zm: t == 1, its_sizes, SQUARE, session),
        _check("algo3-fast gap", "algo3-fast − bound = [n even]·n + n − 1 − K(n) for every n = m ≥ 3",
               fast - bound_at_d_n("masked"),
               lambda t, zn, zm: t == z3.If(zn % 2 == 0, zn, 0) + zn - 1 - z3.Int("K"), its_sizes, SQUARE, session),
        _check("algo3-fast above the bound", "algo3-fast takes more cycles than the masked bound for every "
               "n = m ≥ 4", fast - bound_at_d_n("masked"), lambda t, zn, zm: t > 0,
               lambda zn, zm, zk: [zk == 1, zn >= 4], SQUARE, session),
    ]
