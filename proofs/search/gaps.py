"""How far the schedules' proved cycle counts lie from each other and from the proved lower bound
(docs/optimal.md §4): each statement a Z3 query over the sympy closed forms, for all n with m | n.

The cycle counts are `counting.counts(schedule).cycles` (derived from the loop nests, the forms the
prover reports); the bound is `bound.CLOSED` at d = n (the schedules' shape). Both are translated by
`to_z3.ToZ3` with n = k·m; nothing is sampled. A statement is `proved` only on Z3's unsat of its
negation (unknown or a timeout is not proved).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import sympy as sp
import z3

from ringproof.proofs.ring.budgets import GAP
from ringproof.proofs.ring.counting import M, N, counts
from ringproof.proofs.search.bound import CLOSED, K_FORM
from ringproof.proofs.search.to_z3 import ToZ3
from ringproof.proofs.search.validity import valid

K = sp.Symbol("k", integer=True, positive=True)
KN = sp.Symbol("K", integer=True, nonnegative=True)       # K(n): see bound.K_FORM and lemma K-least
H = sp.Symbol("h", integer=True, nonnegative=True)        # n = 2h + parity


@dataclass(frozen=True)
class Gap:
    name: str
    statement: str
    proved: bool
    seconds: float


def cycles(schedule) -> sp.Expr:
    """The proved cycle count of a schedule (d = n)."""
    return counts(schedule).cycles


def bound_at_d_n(variant: str) -> sp.Expr:
    """The lower bound of `variant` at d = n, K(n) as the symbol K."""
    text = CLOSED[variant].replace(K_FORM, "K")
    return sp.sympify(text, locals={"n": N, "m": M, "d": N, "K": KN})


def _check(name: str, statement: str, expr: sp.Expr, claim, domain, cases, seconds: float = 600.0) -> Gap:
    """Z3: for all m, k ≥ 1 (n = k·m) in `domain(n, m, k)`, `claim(term, n, m)` holds of `expr` in
    every case, and the cases cover the domain. A case is (parity, hyps) or (parity, hyps, k): with
    a parity p, sympy first writes n as 2h + p (so ⌊n/2⌋ = h exactly) and m as n/k (k the case's
    value, else the symbol); without, n as k·m. The split is the help given to Z3; that it covers
    everything is itself checked."""
    start = time.perf_counter()
    zn, zm, zk, zh, zK = z3.Ints("n m k h K")
    base = [zm >= 1, zk >= 1, zh >= 0, zn == zk * zm] + list(domain(zn, zm, zk))
    cases = [c if len(c) == 3 else (*c, None) for c in cases]
    ok = _valid(z3.Or(*[z3.And(*_case_hyps(p, hyps, zn, zm, zk), *([] if kv is None else [zk == kv]))
                        for p, hyps, kv in cases]), base, seconds)
    for parity, hyps, kv in cases:
        if not ok:
            break
        tr = ToZ3({"n": zn, "m": zm, "k": zk, "h": zh, "K": zK})
        form = (expr.subs(N, K * M) if parity is None else
                expr.subs(M, N / (K if kv is None else kv)).subs(N, 2 * H + parity))
        if kv is not None:
            hyps = (lambda zn_, zm_, zk_, h=hyps, v=kv: list(h(zn_, zm_, zk_)) + [zk_ == v])
        term = tr(sp.expand(form))
        extra = [zK >= 0, zK * (zK + 3) >= 2 * zn, (zK - 1) * (zK + 2) < 2 * zn] if expr.has(KN) else []
        ok = _valid(claim(term, zn, zm), base + tr.side + extra + _case_hyps(parity, hyps, zn, zm, zk, zh), seconds)
    return Gap(name, statement, ok, time.perf_counter() - start)


U = sp.Symbol("u", integer=True, nonnegative=True)        # m = 2u or 2u + 1
V = sp.Symbol("v", integer=True, nonnegative=True)        # k = 2v or 2v + 1
# (when, sympy m, sympy k, z3 m, z3 k, z3 constraints on u, v): every m, k ≥ 1 by the parities of m and k
BY_RESIDUES = [
    (lambda zm, zk: zm % 2 == 0, 2 * U, K, lambda zu, zv, zk: 2 * zu, lambda zu, zv, zk: zk,
     lambda zu, zv: [zu >= 1]),
    (lambda zm, zk: z3.And(zm % 2 == 1, zk % 2 == 0), 2 * U + 1, 2 * V, lambda zu, zv, zk: 2 * zu + 1,
     lambda zu, zv, zk: 2 * zv, lambda zu, zv: [zu >= 0, zv >= 1]),
    (lambda zm, zk: z3.And(zm % 2 == 1, zk % 2 == 1), 2 * U + 1, 2 * V + 1, lambda zu, zv, zk: 2 * zu + 1,
     lambda zu, zv, zk: 2 * zv + 1, lambda zu, zv: [zu >= 0, zv >= 0]),
]


def _check_by_residues(name: str, statement: str, expr: sp.Expr, claim, domain, seconds: float = 600.0) -> Gap:
    """As `_check`, split by the parities of m and k: sympy writes m = 2u (+1) and k = 2v (+1)
    first, so ⌊m/2⌋, ⌊n/2⌋ and their residues become exact; the split's cover is checked."""
    start = time.perf_counter()
    zn, zm, zk, zu, zv = z3.Ints("n m k u v")
    base = [zm >= 1, zk >= 1, zn == zk * zm]
    ok = _valid(z3.Or(*[when(zm, zk) for when, *_ in BY_RESIDUES]), base, seconds)
    for when, sm, sk, tm, tk, uv in BY_RESIDUES:
        if not ok:
            break
        form = sp.simplify(expr.subs(N, K * M).subs({M: sm, K: sk}, simultaneous=True))
        tr = ToZ3({"u": zu, "v": zv, "k": zk})
        term = tr(form)
        cm, ck = tm(zu, zv, zk), tk(zu, zv, zk)
        ok = _valid(claim(term, cm * ck, cm), [zk >= 1, *uv(zu, zv), *tr.side, *domain(cm * ck, cm, ck)], seconds)
    return Gap(name, statement, ok, time.perf_counter() - start)


def _case_hyps(parity, hyps, zn, zm, zk, zh=None):
    """A case's hypotheses; with a parity, n's and (when h is given) n = 2h + parity."""
    if parity is None:
        return list(hyps(zn, zm, zk))
    return list(hyps(zn, zm, zk)) + [zn % 2 == parity] + ([] if zh is None else [zn == 2 * zh + parity])


def _valid(claim, hyps, seconds: float) -> bool:
    return valid(claim, hyps, rlimit=GAP, seconds=seconds)


EVERY = lambda zn, zm, zk: []           # noqa: E731  (every n, m with m | n)
ALL = [(None, EVERY)]
BY_PARITY = [(0, EVERY), (1, EVERY)]
BY_PARITY_K1 = [(0, EVERY, 1), (1, EVERY, 1)]        # n = 2h + p, m = n


def algo2_gaps() -> list[Gap]:
    """algo2-fast against Algorithm 2 and against the symmetric bound."""
    from ringproof.schedules.algo2 import ALGO2
    from ringproof.schedules.algo2_fast import ALGO2_FAST

    diff = cycles(ALGO2) - cycles(ALGO2_FAST)
    gap = cycles(ALGO2_FAST) - bound_at_d_n("symmetric")
    square = lambda zn, zm, zk: [zk == 1]     # noqa: E731  (m = n)
    return [
        _check_by_residues("algo2-fast <= algo2", "algo2-fast never takes more cycles than Algorithm 2 (every m | n)",
                           diff, lambda t, zn, zm: t >= 0, EVERY),
        _check_by_residues("algo2-fast < algo2", "algo2-fast takes fewer cycles than Algorithm 2 for every n ≥ 7 "
                           "with 2 ≤ m | n", diff, lambda t, zn, zm: t > 0, lambda zn, zm, zk: [zn >= 7, zm >= 2]),
        _check("algo2-fast <= algo2 (m = n)", "algo2-fast never takes more cycles than Algorithm 2 when m = n",
               diff, lambda t, zn, zm: t >= 0, square, BY_PARITY_K1),
        _check("algo2-fast < algo2 (m = n)", "algo2-fast takes fewer cycles than Algorithm 2 for every n ≥ 5 "
               "when m = n", diff, lambda t, zn, zm: t > 0, lambda zn, zm, zk: [zk == 1, zn >= 5], BY_PARITY_K1),
        _check("algo2-fast gap", "algo2-fast − bound = n²/(2m) for even n, 0 for odd n (every m | n)",
               gap, lambda t, zn, zm: z3.If(zn % 2 == 0, 2 * zm * t == zn * zn, t == 0), EVERY, BY_PARITY),
    ]


def algo2_even_gaps() -> list[Gap]:
    """algo2-even (even n = m) against the symmetric bound and against algo2-fast."""
    from ringproof.schedules.algo2_even import ALGO2_EVEN
    from ringproof.schedules.algo2_fast import ALGO2_FAST

    even_square = lambda zn, zm, zk: [zk == 1, zn % 2 == 0]     # noqa: E731  (its side condition)
    even_cases = [(0, EVERY, 1)]
    return [
        _check("algo2-even gap", "algo2-even meets the symmetric bound for every even n = m",
               cycles(ALGO2_EVEN) - bound_at_d_n("symmetric"), lambda t, zn, zm: t == 0, even_square, even_cases),
        _check("algo2-even < algo2-fast", "algo2-even takes n/2 cycles fewer than algo2-fast for every even n = m",
               cycles(ALGO2_FAST) - cycles(ALGO2_EVEN), lambda t, zn, zm: 2 * t == zn, even_square, even_cases),
    ]


def algo3_gaps() -> list[Gap]:
    """Algorithm 3 against the masked bound at m = n: [n even]·n + n − K(n)."""
    from ringproof.schedules.algo3 import ALGO3

    gap = cycles(ALGO3) - bound_at_d_n("masked")
    return [_check("algo3 gap (m = n)", "Algorithm 3 − bound = [n even]·n + n − K(n) for m = n",
                   gap, lambda t, zn, zm: t == z3.If(zn % 2 == 0, zn, 0) + zn - z3.Int("K"),
                   lambda zn, zm, zk: [zk == 1], BY_PARITY_K1)]


def algo3_fast_gaps() -> list[Gap]:
    """algo3-fast (n = m ≥ 3) against Algorithm 3 and against the masked bound."""
    from ringproof.schedules.algo3 import ALGO3
    from ringproof.schedules.algo3_fast import ALGO3_FAST

    its_sizes = lambda zn, zm, zk: [zk == 1, zn >= 3]     # noqa: E731  (its side condition)
    fast = cycles(ALGO3_FAST)
    return [
        _check("algo3-fast < algo3", "algo3-fast takes one cycle fewer than Algorithm 3 for every n = m ≥ 3",
               cycles(ALGO3) - fast, lambda t, zn, zm: t == 1, its_sizes, BY_PARITY_K1),
        _check("algo3-fast gap", "algo3-fast − bound = [n even]·n + n − 1 − K(n) for every n = m ≥ 3",
               fast - bound_at_d_n("masked"),
               lambda t, zn, zm: t == z3.If(zn % 2 == 0, zn, 0) + zn - 1 - z3.Int("K"), its_sizes, BY_PARITY_K1),
        _check("algo3-fast above the bound", "algo3-fast takes more cycles than the masked bound for every "
               "n = m ≥ 4", fast - bound_at_d_n("masked"), lambda t, zn, zm: t > 0,
               lambda zn, zm, zk: [zk == 1, zn >= 4], BY_PARITY_K1),
    ]

