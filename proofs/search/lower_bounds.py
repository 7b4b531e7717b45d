"""Lower bounds on the cycles of the bit-level machine that hold for every n (docs/bitlevel.md, L1-L4).

Each lemma is a record with its statement and a verdict from Z3 (for all integers, within the
resource limit `BOUND_LEMMA`: unknown is not proved) or sympy (closed sums); the closed forms are
cross-checked against `BitProblem.phase_minimum` by enumeration.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import sympy as sp
import z3

from ringproof.model.bitlevel.problem import BitProblem, spread_cycles
from ringproof.proofs.ring.budgets import BOUND_LEMMA
from ringproof.proofs.search.validity import valid


@dataclass(frozen=True)
class BoundLemma:
    name: str
    statement: str
    proved: bool
    seconds: float
    method: str


def _z3_valid(claim) -> bool:
    return valid(claim, rlimit=BOUND_LEMMA)


def _timed(name: str, statement: str, method: str, check) -> BoundLemma:
    start = time.perf_counter()
    ok = bool(check())
    return BoundLemma(name, statement, ok, time.perf_counter() - start, method)


def spread_step() -> BoundLemma:
    """L2b step: if a datum's holders form an arc of a <= m PEs starting at its producer, one cycle
    later they form an arc of at most min(m, a + 1) PEs (a send from offset o lands on offset o + 1)."""
    m, a, o = z3.Ints("m a o")
    new_len = z3.If(o + 1 >= a, o + 2, a)  # arc length once offset o+1 (mod m) also holds the datum
    claim = z3.ForAll([m, a, o], z3.Implies(z3.And(m >= 1, 1 <= a, a <= m, 0 <= o, o < a),
                                            z3.Or(new_len <= a, new_len == a + 1)))
    return _timed("L2b-step", "holders of a datum grow by at most one PE per cycle", "z3",
                  lambda: _z3_valid(claim))


def spread_sum() -> BoundLemma:
    """sum_{c=1..k} min(m, c+1) = k(k+3)/2 while k <= m - 1."""
    c, k = sp.symbols("c k", integer=True, positive=True)

    def ok():
        closed = sp.summation(c + 1, (c, 1, k))
        return sp.simplify(closed - k * (k + 3) / 2) == 0 and all(
            sum(min(mm, cc + 1) for cc in range(1, kk + 1)) == kk * (kk + 3) // 2
            for mm in range(1, 12) for kk in range(0, mm))

    return _timed("L2b-sum", "DIV slots reachable in k cycles after a row sum finishes: k(k+3)/2 (k < m)",
                  "sympy", ok)


def spread_fits() -> BoundLemma:
    """For n >= 2 the k = n - 1 cycles already reach n PE-cycles, so K(n, n) <= n - 1 and the sum
    formula applies (Z3, nonlinear, for all n)."""
    n = z3.Int("n")
    claim = z3.ForAll([n], z3.Implies(n >= 2, (n - 1) * (n + 2) >= 2 * n))
    return _timed("L2b-fits", "K(n, n) <= n - 1 for all n >= 2", "z3", lambda: _z3_valid(claim))


def op_counts() -> BoundLemma:
    """Ops per phase (sympy sums over the index sets), checked against the enumerated op sets."""
    n, d, i = sp.symbols("n d i", integer=True, positive=True)
    tri = sp.summation(i + 1, (i, 0, n - 1))  # masked rows: j <= i
    forms = {"plain": (d * n**2, 2 * n**2, d * n**2), "masked": (d * tri, 2 * tri, d * tri),
             "symmetric": (d * tri, 2 * n**2, d * n**2)}

    def ok():
        for v, f in forms.items():
            for nn in range(1, 7):
                for dd in range(1, 4):
                    prob = BitProblem(v, nn, 1, dd)
                    if [prob.count(ph) for ph in (1, 2, 3)] != [int(x.subs({n: nn, d: dd})) for x in f]:
                        return False
        return True

    return _timed("L1-counts", "MAC1/phase-2/MAC3 counts: plain dn^2, 2n^2, dn^2; masked dn(n+1)/2, n(n+1), "
                  "dn(n+1)/2; symmetric dn(n+1)/2, 2n^2, dn^2", "sympy + enumeration", ok)


def closed_form_bounds(limit: int = 14) -> BoundLemma:
    """For n = m = d: plain T >= 2n^2 + 2n, symmetric T >= n(n+1)/2 + 2n + n^2,
    masked T >= n(n+1) + n + K(n) with K(n) = ceil((sqrt(8n+9) - 3)/2) (n >= 2)."""
    def K(n: int) -> int:
        return int(sp.ceiling((sp.sqrt(8 * n + 9) - 3) / 2))

    forms = {"plain": lambda n: 2 * n * n + 2 * n,
             "symmetric": lambda n: n * (n + 1) // 2 + 2 * n + n * n,
             "masked": lambda n: n * (n + 1) + n + K(n)}

    def ok():
        return all(sum(BitProblem(v, n, n).phase_minimum()) == f(n) and K(n) == spread_cycles(n, n)
                   for v, f in forms.items() for n in range(2, limit + 1))

    return _timed("L4-closed", "closed-form lower bounds on T for n = m = d", "sympy + enumeration", ok)


def prove_all() -> list[BoundLemma]:
    return [spread_step(), spread_sum(), spread_fits(), op_counts(), closed_form_bounds()]
