"""Batch (patch) scheduling heuristics of the Intel paper: RR, Cluster Beamforming, load balancing.

A `BatchProblem` is plain data: each patch's share on each memory bank, each cluster's near bank, and
the bank-to-bank latency matrix. Executing patch p on cluster q costs
    cost(p, q) = sum_b share[p][b] * latency[b][near[q]]
(a patch straddling banks pays each bank's latency in proportion to its share). A schedule is an
assignment patch -> cluster; its makespan is the largest summed cost on one cluster.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from ringproof.errors import BadInput


@dataclass(frozen=True)
class BatchProblem:
    """Patches with bank shares, clusters with a near bank, latency[b][c] between banks b and c."""

    shares: tuple[tuple[Fraction, ...], ...]
    near: tuple[int, ...]
    latency: tuple[tuple[Fraction, ...], ...]
    seed: int = 0

    def __post_init__(self):
        banks = len(self.latency)
        if banks < 1 or any(len(row) != banks for row in self.latency):
            raise BadInput(f"latency must be a square banks x banks matrix, got latency={self.latency!r}")
        if any(Fraction(x) <= 0 for row in self.latency for x in row):
            raise BadInput(f"latencies must be positive, got latency={self.latency!r}")
        if not self.near:
            raise BadInput("need at least one cluster, got near=()")
        for q, b in enumerate(self.near):
            if not (isinstance(b, int) and 0 <= b < banks):
                raise BadInput(f"cluster {q} is near no bank: near[{q}]={b!r} (banks 0..{banks - 1})")
        lonely = sorted(set(range(banks)) - set(self.near))
        if lonely:
            raise BadInput(f"bank {lonely[0]} has no near cluster (near={list(self.near)})")
        for p, row in enumerate(self.shares):
            if len(row) != banks:
                raise BadInput(f"patch {p} needs {banks} bank proportions, got shares[{p}]={row!r}")
            if any(Fraction(x) < 0 for x in row) or sum(Fraction(x) for x in row) != 1:
                raise BadInput(f"patch {p}: proportions must be >= 0 and sum to 1, got {[str(x) for x in row]}")

    @property
    def patches(self) -> int:
        return len(self.shares)

    @property
    def banks(self) -> int:
        return len(self.latency)

    @property
    def clusters(self) -> int:
        return len(self.near)

    @cached_property
    def near_clusters(self) -> tuple[tuple[int, ...], ...]:
        """For each bank, its near clusters in index order."""
        return tuple(tuple(q for q, b in enumerate(self.near) if b == bank) for bank in range(self.banks))

    @cached_property
    def types(self) -> tuple[tuple[tuple[Fraction, ...], tuple[int, ...]], ...]:
        """Distinct share vectors with the patches having them (first-occurrence order)."""
        groups: dict[tuple[Fraction, ...], list[int]] = {}
        for p, row in enumerate(self.shares):
            groups.setdefault(tuple(Fraction(x) for x in row), []).append(p)
        return tuple((row, tuple(ps)) for row, ps in groups.items())

    def type_cost(self, row: tuple[Fraction, ...], q: int) -> Fraction:
        return sum((s * Fraction(self.latency[b][self.near[q]]) for b, s in enumerate(row) if s), Fraction(0))

    @cached_property
    def unit(self) -> int:
        """Common denominator of all costs: cost * unit is an integer."""
        return math.lcm(*(self.type_cost(row, q).denominator for row, _ in self.types for q in range(self.clusters)))

    @cached_property
    def type_costs(self) -> np.ndarray:
        """Integer costs (in 1/unit time) per patch type x cluster."""
        return np.array([[int(self.type_cost(row, q) * self.unit) for q in range(self.clusters)]
                         for row, _ in self.types], dtype=np.int64).reshape(len(self.types), self.clusters)

    @cached_property
    def costs(self) -> np.ndarray:
        """Integer costs (in 1/unit time) per patch x cluster."""
        out = np.empty((self.patches, self.clusters), dtype=np.int64)
        for t, (_, ps) in enumerate(self.types):
            out[list(ps)] = self.type_costs[t]
        return out

    def check(self, assignment) -> tuple[int, ...]:
        """The assignment as a tuple, after checking it maps every patch to exactly one cluster."""
        assignment = tuple(int(q) for q in assignment)
        if len(assignment) != self.patches:
            raise ValueError(f"assignment has {len(assignment)} entries for {self.patches} patches")
        bad = [p for p, q in enumerate(assignment) if not 0 <= q < self.clusters]
        if bad:
            p = bad[0]
            raise ValueError(f"patch {p} assigned to cluster {assignment[p]} (clusters 0..{self.clusters - 1})")
        return assignment

    def loads(self, assignment) -> np.ndarray:
        """Integer load (in 1/unit time) of each cluster."""
        a = np.asarray(self.check(assignment), dtype=np.int64)
        return np.bincount(a, weights=self.costs[np.arange(self.patches), a], minlength=self.clusters).astype(np.int64)

    def makespan(self, assignment) -> Fraction:
        return Fraction(int(self.loads(assignment).max(initial=0)), self.unit)

    def utilization(self, assignment) -> float:
        """Share of cluster time spent on work at local latency: sum of best costs / (Q * makespan)."""
        span = self.makespan(assignment)
        return float(Fraction(int(self.costs.min(axis=1).sum()), self.unit) / (self.clusters * span)) if span else 1.0


@dataclass(frozen=True)
class Schedule:
    """A named assignment patch -> cluster with its makespan (exact) and utilization."""

    name: str
    assignment: tuple[int, ...]
    makespan: Fraction
    utilization: float


def evaluate_assignment(problem: BatchProblem, name: str, assignment) -> Schedule:
    assignment = problem.check(assignment)
    return Schedule(name, assignment, problem.makespan(assignment), problem.utilization(assignment))


def round_robin(problem: BatchProblem) -> tuple[int, ...]:
    """Patch p to cluster p mod Q, regardless of where it lies."""
    return tuple(p % problem.clusters for p in range(problem.patches))


def cbmf_banks(problem: BatchProblem) -> tuple[int, ...]:
    """Each patch's bank: its largest share; ties broken by a generator seeded with problem.seed."""
    rng = random.Random(problem.seed)
    banks = []
    for row in problem.shares:
        top = max(row)
        tied = [b for b, s in enumerate(row) if s == top]
        banks.append(tied[0] if len(tied) == 1 else rng.choice(tied))
    return tuple(banks)


def cbmf(problem: BatchProblem) -> tuple[int, ...]:
    """Cluster Beamforming: each patch to its bank, then round-robin over that bank's near clusters."""
    nxt = [0] * problem.banks
    out = []
    for b in cbmf_banks(problem):
        near = problem.near_clusters[b]
        out.append(near[nxt[b] % len(near)])
        nxt[b] += 1
    return tuple(out)


def _water_fill(demand: int, base: dict[int, Fraction], unit_cost: dict[int, Fraction]) -> dict[int, int]:
    """Integer counts n_q summing to demand that level base[q] + n_q * unit_cost[q] (largest remainder)."""
    order = sorted(base, key=lambda q: (base[q], q))
    for k in range(1, len(order) + 1):  # the level of the k lowest clusters filled to absorb demand
        active = order[:k]
        level = (demand + sum(base[q] / unit_cost[q] for q in active)) / sum(1 / unit_cost[q] for q in active)
        if k == len(order) or level <= base[order[k]]:
            break
    ideal = {q: max(Fraction(0), (level - base[q]) / unit_cost[q]) for q in base}
    counts = {q: math.floor(x) for q, x in ideal.items()}
    short = demand - sum(counts.values())
    for q in sorted(base, key=lambda q: (-(ideal[q] - counts[q]), unit_cost[q], q))[:short]:
        counts[q] += 1
    return counts


def _balance(problem: BatchProblem, weighted: bool) -> tuple[int, ...]:
    banks = cbmf_banks(problem)
    members = [[p for p, b in enumerate(banks) if b == bank] for bank in range(problem.banks)]
    mean = Fraction(problem.patches, problem.clusters)
    per_cluster = [Fraction(len(members[b]), len(problem.near_clusters[b])) for b in range(problem.banks)]
    under = [b for b in range(problem.banks) if per_cluster[b] <= mean]
    over = sorted((b for b in range(problem.banks) if per_cluster[b] > mean), key=lambda b: (-per_cluster[b], b))
    load = {q: Fraction(0) for q in range(problem.clusters)}
    out = [0] * problem.patches

    def step(bank: int, q: int) -> Fraction:
        return Fraction(problem.latency[bank][problem.near[q]]) if weighted else Fraction(1)

    for bank in under:  # under-loaded banks keep their patches on their near clusters
        near = problem.near_clusters[bank]
        for i, p in enumerate(members[bank]):
            out[p] = near[i % len(near)]
            load[out[p]] += step(bank, out[p])
    receivers = [q for b in under for q in problem.near_clusters[b]]
    for bank in over:  # share the overloaded bank's patches with the under-loaded banks' clusters
        pool = list(problem.near_clusters[bank]) + receivers
        counts = _water_fill(len(members[bank]), {q: load[q] for q in pool}, {q: step(bank, q) for q in pool})
        slots = [q for q in sorted(pool, key=lambda q: (Fraction(problem.latency[bank][problem.near[q]]), q))
                 for _ in range(counts[q])]
        local_first = sorted(members[bank], key=lambda p: (-problem.shares[p][bank], p))
        for p, q in zip(local_first, slots):
            out[p] = q
            load[q] += step(bank, q)
    return tuple(out)


def balanced(problem: BatchProblem) -> tuple[int, ...]:
    """The paper's load balancing after CBMF: overloaded banks hand patches to under-loaded banks'
    clusters until patch counts per cluster are level (latency ignored)."""
    return _balance(problem, weighted=False)


def weighted(problem: BatchProblem) -> tuple[int, ...]:
    """Weighted load balancing: an overloaded bank's patches are split over its own and the
    under-loaded clusters in inverse proportion of the latency to reach them (levelled finish times)."""
    return _balance(problem, weighted=True)


def greedy(problem: BatchProblem) -> tuple[int, ...]:
    """Earliest finish (min-min): repeatedly place the patch that can finish first, where it finishes
    first; patches of one type are interchangeable, so only types are compared."""
    costs = problem.type_costs
    left = np.array([len(ps) for _, ps in problem.types], dtype=np.int64)
    load = np.zeros(problem.clusters, dtype=np.int64)
    slots: list[list[int]] = [[] for _ in problem.types]
    for _ in range(problem.patches):
        finish = load[None, :] + costs
        finish[left == 0] = np.iinfo(np.int64).max
        t, q = divmod(int(np.argmin(finish)), problem.clusters)
        load[q] = finish[t, q]
        left[t] -= 1
        slots[t].append(q)
    out = [0] * problem.patches
    for (_, ps), qs in zip(problem.types, slots):
        for p, q in zip(ps, qs):
            out[p] = q
    return tuple(out)


HEURISTICS = {"RR": round_robin, "CBMF": cbmf, "balanced": balanced, "weighted": weighted, "greedy": greedy}
