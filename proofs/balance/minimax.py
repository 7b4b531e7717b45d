"""Exact MINIMAX batch assignment (Intel paper, section 4.2): min over assignments of the max over
clusters of summed execution time.

Aggregated formulation: patches with equal bank shares are one *type* t with n_t copies; the integer
x[t, q] counts copies of t on cluster q. Costs are scaled to integers (BatchProblem.unit), so the
makespan T is an integer too:

    min T   s.t.  sum_q x[t, q] = n_t,   sum_t c[t, q] x[t, q] <= T,   x >= 0 integer.

Clusters with equal cost columns (same near bank) are interchangeable. HiGHS detects that
permutation symmetry itself (orbital fixing) and is fastest left alone; ordering the twins' loads
(load_q >= load_q' for consecutive twins, `symmetry=True`) is exact too but slower
(docs/minimax.md, Symmetry). HiGHS (`scipy.optimize.milp`) solves the model; the lower bound is certified in
exact rational arithmetic by LP weak duality; Z3 re-derives the optimum independently on small instances.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import z3
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse import coo_matrix

from ringproof.proofs.results import Verdict
from ringproof.model.device.batch import HEURISTICS, BatchProblem, greedy


@dataclass(frozen=True)
class Optimum:
    """Best assignment found, its makespan, a lower bound on the optimum, and whether they meet."""

    assignment: tuple[int, ...]
    makespan: Fraction
    lower_bound: Fraction
    certified_bound: Fraction
    proven: bool
    seconds: float
    status: str

    @property
    def gap(self) -> float:
        """(makespan - lower_bound) / lower_bound; 0 when proven."""
        return float((self.makespan - self.lower_bound) / self.lower_bound) if self.lower_bound else 0.0


def twins(problem: BatchProblem) -> list[tuple[int, int]]:
    """Consecutive pairs of clusters with identical cost columns (symmetry to break)."""
    last: dict[tuple[int, ...], int] = {}
    pairs = []
    for q in range(problem.clusters):
        key = tuple(int(c) for c in problem.type_costs[:, q])
        if key in last:
            pairs.append((last[key], q))
        last[key] = q
    return pairs


def certified_bound(problem: BatchProblem) -> int:
    """A lower bound on the optimal makespan (in 1/unit time), checked exactly.

    For any weights w >= 0 summing to 1 over clusters, every assignment has makespan
    >= sum_q w_q load_q >= sum_t n_t min_q c[t, q] w_q (weak duality of the LP relaxation). The
    weights are HiGHS's duals, made exact; the bound also covers the costliest single patch.
    """
    c, n = problem.type_costs, _counts(problem)
    if not len(n):
        return 0
    k, m = c.shape
    # LP relaxation: variables x[t, q] (row-major) then T
    a_eq = np.zeros((k, k * m + 1))
    for t in range(k):
        a_eq[t, t * m:(t + 1) * m] = 1
    a_ub = np.zeros((m, k * m + 1))
    for q in range(m):
        a_ub[q, q:k * m:m] = c[:, q]
        a_ub[q, -1] = -1
    obj = np.zeros(k * m + 1)
    obj[-1] = 1
    res = linprog(obj, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=n, bounds=(0, None), method="highs")
    weights = [max(Fraction(-float(y)).limit_denominator(10**6), Fraction(0)) for y in res.ineqlin.marginals] \
        if res.status == 0 else [Fraction(1)] * m
    total = sum(weights) or Fraction(1)
    weights = [x / total for x in weights]
    dual = sum(int(n[t]) * min(int(c[t, q]) * weights[q] for q in range(m)) for t in range(k))
    return max(math.ceil(dual), int(c.min(axis=1).max()))


def _counts(problem: BatchProblem) -> np.ndarray:
    return np.array([len(ps) for _, ps in problem.types], dtype=np.int64)


def _assignment(problem: BatchProblem, x: np.ndarray) -> tuple[int, ...] | None:
    """Expand type counts x[t, q] into patch -> cluster; None if the counts do not cover each type."""
    out = [0] * problem.patches
    for t, (_, ps) in enumerate(problem.types):
        slots = [q for q in range(problem.clusters) for _ in range(max(int(x[t, q]), 0))]
        if len(slots) != len(ps):
            return None
        for p, q in zip(ps, slots):
            out[p] = q
    return tuple(out)


def solve(problem: BatchProblem, time_limit: float | None = None, symmetry: bool = False) -> Optimum:
    """Minimax assignment by HiGHS, warm-bounded by the greedy schedule and the certified bound.

    With a time limit, the best assignment so far is returned with `proven` False unless its
    makespan meets the lower bound. `symmetry` adds explicit load ordering of twin clusters.
    """
    start = time.perf_counter()
    incumbent = greedy(problem)
    upper = int(problem.loads(incumbent).max(initial=0))
    exact = certified_bound(problem)
    lower, best, status = exact, incumbent, "optimal"
    if upper > lower:
        c, n = problem.type_costs, _counts(problem)
        k, m = c.shape
        nv = k * m + 1
        rows, cols, vals, lo, hi = [], [], [], [], []

        def row(entries, lb, ub):
            r = len(lo)
            for col, v in entries:
                rows.append(r), cols.append(col), vals.append(v)
            lo.append(lb), hi.append(ub)

        for t in range(k):
            row([(t * m + q, 1) for q in range(m)], n[t], n[t])
        for q in range(m):
            row([(t * m + q, int(c[t, q])) for t in range(k)] + [(nv - 1, -1)], -np.inf, 0)
        if symmetry:
            for q, r in twins(problem):
                row([(t * m + q, int(c[t, q])) for t in range(k)] + [(t * m + r, -int(c[t, r])) for t in range(k)],
                    0, np.inf)
        ub_x = np.array([n[t] if c[t, q] <= upper else 0 for t in range(k) for q in range(m)] + [upper], float)
        lb_x = np.zeros(nv)
        lb_x[-1] = lower
        obj = np.zeros(nv)
        obj[-1] = 1
        options = {"mip_rel_gap": 0.0, "disp": False}
        if time_limit is not None:
            options["time_limit"] = max(time_limit - (time.perf_counter() - start), 0.01)
        res = milp(obj, integrality=np.ones(nv), bounds=Bounds(lb_x, ub_x), options=options,
                   constraints=LinearConstraint(coo_matrix((vals, (rows, cols)), shape=(len(lo), nv)), lo, hi))
        if res.x is not None:
            found = _assignment(problem, np.rint(res.x[:-1]).astype(np.int64).reshape(k, m))
            if found is not None and problem.loads(found).max(initial=0) < upper:
                best, upper = found, int(problem.loads(found).max(initial=0))
        bound = getattr(res, "mip_dual_bound", None)
        if bound is not None and np.isfinite(bound):
            lower = max(lower, math.ceil(bound - 1e-6))
        if upper > lower:
            status = "time limit" if res.status == 1 else f"not proven ({res.message})"
    lower = min(lower, upper)
    unit = problem.unit
    return Optimum(best, Fraction(upper, unit), Fraction(lower, unit), Fraction(min(exact, upper), unit),
                   upper == lower, time.perf_counter() - start, status)


@dataclass(frozen=True)
class Certificate:
    """Z3's verdict on "the optimal makespan is exactly `makespan`"; `better` is Z3's witness
    makespan when refuted by a cheaper assignment."""

    verdict: Verdict
    makespan: Fraction
    reason: str
    better: Fraction | None = None


def _z3_feasible(problem: BatchProblem, bound: int, timeout_ms: int) -> tuple[z3.CheckSatResult, int | None]:
    """Is there an assignment with every cluster load <= bound (units)? Plain aggregated model."""
    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    s.set("timeout", timeout_ms, "random_seed", 0)
    c = problem.type_costs
    x = [[z3.Int(f"x_{t}_{q}", ctx) for q in range(problem.clusters)] for t in range(len(problem.types))]
    for t, (_, ps) in enumerate(problem.types):
        s.add(*(v >= 0 for v in x[t]), z3.Sum(x[t]) == len(ps))
    loads = [z3.Sum([int(c[t, q]) * x[t][q] for t in range(len(x))]) if x else z3.IntVal(0, ctx)
             for q in range(problem.clusters)]
    s.add(*(ld <= bound for ld in loads))
    verdict = s.check()
    if verdict != z3.sat:
        return verdict, None
    model = s.model()
    return verdict, max(model.eval(ld, model_completion=True).as_long() for ld in loads)


def certify(problem: BatchProblem, makespan: Fraction, timeout_ms: int = 10_000) -> Certificate:
    """Check with Z3 alone that `makespan` is achievable and that nothing smaller is."""
    target = makespan * problem.unit
    if target.denominator != 1:
        return Certificate(Verdict.REFUTED, makespan, f"{makespan} is not a multiple of 1/{problem.unit}")
    target = int(target)
    below, witness = _z3_feasible(problem, target - 1, timeout_ms)
    if below == z3.sat:
        return Certificate(Verdict.REFUTED, makespan, "Z3 found a smaller makespan", Fraction(witness, problem.unit))
    if below != z3.unsat:
        return Certificate(Verdict.UNKNOWN, makespan, f"Z3 returned {below} for makespan < {makespan}")
    at, _ = _z3_feasible(problem, target, timeout_ms)
    if at == z3.unsat:
        return Certificate(Verdict.REFUTED, makespan, f"Z3: no assignment reaches {makespan}")
    if at != z3.sat:
        return Certificate(Verdict.UNKNOWN, makespan, f"Z3 returned {at} for makespan <= {makespan}")
    return Certificate(Verdict.PROVED, makespan, "reachable, and Z3 proves every smaller bound unsat")


def z3_optimum(problem: BatchProblem, timeout_ms: int = 10_000) -> Fraction | None:
    """The optimal makespan by Z3 alone (descending search from a feasible load), None if unknown."""
    verdict, best = _z3_feasible(problem, int(problem.costs.max(initial=0)) * problem.patches, timeout_ms)
    if verdict != z3.sat:
        return None
    while True:
        verdict, better = _z3_feasible(problem, best - 1, timeout_ms)
        if verdict == z3.unsat:
            return Fraction(best, problem.unit)
        if verdict != z3.sat:
            return None
        best = better


# --- the paper's claims, checked on every small instance in a fixed order -------------------------

@dataclass(frozen=True)
class Claim:
    """A claim of the paper: on instances meeting `premise`, schedule `heuristic` is optimal, or
    (converse=True) the heuristic being optimal implies the premise."""

    name: str
    statement: str
    heuristic: str
    premise: str
    converse: bool = False


def one_bank(problem: BatchProblem) -> bool:
    """The whole tensor lies on a single bank."""
    return len({b for row in problem.shares for b, s in enumerate(row) if s}) <= 1


def on_first_bank(problem: BatchProblem) -> bool:
    """The whole tensor lies on the bank near cluster 0 (where RR starts)."""
    return all(row[problem.near[0]] == 1 for row in problem.shares)


def level_banks(problem: BatchProblem) -> bool:
    """Every patch lies on one bank and every bank holds the same number of patches per near cluster."""
    if any(max(row) != 1 for row in problem.shares):
        return False
    per = {Fraction(sum(row[b] for row in problem.shares), len(problem.near_clusters[b])) for b in range(problem.banks)}
    return len(per) == 1


def always(problem: BatchProblem) -> bool:
    return True


PREMISES = {"always": always, "one bank": one_bank, "bank of cluster 0": on_first_bank, "level banks": level_banks}

CLAIMS = (
    Claim("cbmf-optimal", "Cluster Beamforming always schedules optimally (paper, section 6)", "CBMF", "always"),
    Claim("rr-only-one-bank", "RR is optimal only when the whole tensor is on one bank (paper, section 3)",
          "RR", "one bank", converse=True),
    Claim("rr-one-bank", "RR is optimal when the whole tensor is on one bank (the reading 'if' of section 3)",
          "RR", "one bank"),
    Claim("rr-first-bank", "RR is optimal when the whole tensor is on the bank near RR's first cluster",
          "RR", "bank of cluster 0"),
    Claim("cbmf-level", "CBMF is optimal when pure patches fill every bank's near clusters equally",
          "CBMF", "level banks"),
)


def patch_shapes(banks: int, overlap: bool) -> list[tuple[Fraction, ...]]:
    """Pure patches on each bank, then (with overlap) 3/4-1/4 straddles of ring-adjacent banks.

    The straddles have no tied shares, so CBMF never depends on its tie-breaking seed.
    """
    shapes = [tuple(Fraction(int(b == c)) for c in range(banks)) for b in range(banks)]
    if overlap and banks > 1:
        for b in range(banks):
            for c in sorted({(b + 1) % banks, (b - 1) % banks} - {b}):
                shapes.append(tuple(Fraction(3, 4) if x == b else Fraction(1, 4) if x == c else Fraction(0)
                                    for x in range(banks)))
    return shapes


def ring_latency(banks: int) -> tuple[tuple[Fraction, ...], ...]:
    """Latency 1 + hops between the banks of a ring."""
    return tuple(tuple(Fraction(1 + min(abs(i - j), banks - abs(i - j))) for j in range(banks))
                 for i in range(banks))


def small_instances(max_patches: int, max_clusters: int, max_banks: int, overlap: bool):
    """Every instance in minimality order: patches N, then clusters Q, then banks B (ring, latency
    1 + hops), then the near map and the patch sequence lexicographically."""
    for n in range(1, max_patches + 1):
        for q in range(1, max_clusters + 1):
            for b in range(1, min(q, max_banks) + 1):
                latency = ring_latency(b)
                shapes = patch_shapes(b, overlap)
                for near in itertools.product(range(b), repeat=q):
                    if len(set(near)) < b:
                        continue
                    for seq in itertools.product(shapes, repeat=n):
                        yield BatchProblem(seq, near, latency)


@dataclass(frozen=True)
class ClaimCheck:
    """Outcome of checking a claim on every small instance: the first counterexample (None if the
    claim held throughout), how many instances met the premise, and the heuristic's and optimal
    makespans on the counterexample."""

    claim: Claim
    overlap: bool
    checked: int
    counterexample: BatchProblem | None
    heuristic_makespan: Fraction | None
    optimum: Fraction | None


def check_claim(claim: Claim, max_patches: int = 4, max_clusters: int = 3, max_banks: int = 3,
                overlap: bool = False) -> ClaimCheck:
    """Search the small instances in minimality order for the first one where the claim fails."""
    premise, heuristic = PREMISES[claim.premise], HEURISTICS[claim.heuristic]
    checked = 0
    for problem in small_instances(max_patches, max_clusters, max_banks, overlap):
        if not claim.converse and not premise(problem):
            continue
        checked += 1
        span = problem.makespan(heuristic(problem))
        best = solve(problem)
        if not best.proven:
            raise RuntimeError(f"HiGHS did not prove the optimum of a tiny instance: {problem!r}")
        optimal = span == best.makespan
        fails = (optimal and not premise(problem)) if claim.converse else not optimal
        if fails:
            return ClaimCheck(claim, overlap, checked, problem, span, best.makespan)
    return ClaimCheck(claim, overlap, checked, None, None, None)


def prove_level_cbmf(clusters: int, base: int = 1, timeout_ms: int = 10_000) -> Verdict:
    """For every k >= 0 (so every N = k * clusters): when pure patches fill each bank's near clusters
    with k patches each, CBMF's makespan k * base is optimal.

    CBMF gives every cluster exactly k local patches, so its makespan is k * base. Z3 shows that no
    assignment does better: counts n_q >= 0 summing to k * clusters, each patch costing at least
    base, cannot keep every load below k * base. Unsat for symbolic k is the proof.
    """
    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    s.set("timeout", timeout_ms, "random_seed", 0)
    k = z3.Int("k", ctx)
    counts = [z3.Int(f"n_{q}", ctx) for q in range(clusters)]
    loads = [z3.Int(f"load_{q}", ctx) for q in range(clusters)]
    s.add(k >= 0, z3.Sum(counts) == k * clusters)
    for n, load in zip(counts, loads):
        s.add(n >= 0, load >= base * n, load < k * base)
    verdict = s.check()
    if verdict == z3.unsat:
        premise = z3.Solver(ctx=ctx)
        premise.add(k >= 1, z3.Sum(counts) == k * clusters, *(n >= 0 for n in counts))
        return Verdict.PROVED if premise.check() == z3.sat else Verdict.UNKNOWN  # non-vacuous
    return Verdict.REFUTED if verdict == z3.sat else Verdict.UNKNOWN
