"""Cube-and-conquer: one horizon T split into independent cubes whose union holds every run.

A cube of depth k fixes the PE of k decisive ops ({op key: PE}, `EncodingModes(cube=...)`); the cubes of T
are all m^k combinations. Every run executes each op exactly once, so on exactly one PE: it lies in
exactly one cube, and T is refuted iff every cube is UNSAT. `check_coverage` does not take this on
trust: it asks a SAT solver for a placement of the decisive ops (each on exactly one PE) that lies in
no cube, and raises if there is one. The phase splits (L1, L2, L3) of global barriers are enumerated
inside each cube (`split_cover` checks they are every composition of T).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from pysat.card import CardEnc, EncType
from pysat.solvers import Solver

from ringproof.model.bitlevel.problem import BitProblem


class IncompleteSplit(AssertionError):
    """A list of cubes (or splits) that misses part of the search space."""


@dataclass(frozen=True)
class Cube:
    """Horizon T, restricted to the runs where each op of `choice` ((op key, PE), ...) runs on that PE."""

    T: int
    choice: tuple = ()

    @property
    def name(self) -> str:
        """Stable name, used as the key of a finished cube in a state file."""
        ops = ";".join(f"{k[0]}({','.join(str(x) for x in k[1:] if x is not None)})@{p}" for k, p in self.choice)
        return f"T={self.T}" + (f" {ops}" if ops else "")

    @property
    def pes(self) -> dict:
        return dict(self.choice)


def decisive_ops(prob: BitProblem, depth: int) -> list[tuple]:
    """The `depth` ops whose PEs the cubes fix: MAC1 ops (l = 0) of the pairs whose inputs start
    farthest apart on the ring, whose PE is therefore least determined; any choice covers."""
    if not 0 <= depth <= len(prob.ops):
        raise ValueError(f"cube depth {depth} outside 0..{len(prob.ops)}")
    start = {x: min(pes) for x, pes in prob.initial.items()}
    first = [s.key for s in prob.ops if s.key[0] == "MAC1" and s.key[3] == 0]

    def spread(key):
        a, b = prob.ops[prob.index[key]].reads
        return (-((start[b] - start[a]) % prob.m), key[1:3])

    ordered = sorted(first, key=spread) + [s.key for s in prob.ops if s.key not in set(first)]
    return ordered[:depth]


def cubes(prob: BitProblem, T: int, depth: int) -> list[Cube]:
    """Every combination of PEs for the decisive ops: m^depth cubes (one, unrestricted, for depth 0)."""
    ops = decisive_ops(prob, depth)
    return [Cube(T, tuple(zip(ops, pes))) for pes in product(range(prob.m), repeat=len(ops))]


def check_coverage(prob: BitProblem, cube_list: list[Cube]) -> None:
    """Raise IncompleteSplit unless every placement of the cubes' decisive ops lies in some cube.

    Variables x(o, p): op o runs on PE p; each op on exactly one PE (as in every run); one clause per
    cube: "not in this cube". UNSAT means the cubes cover every run; a model names a missed placement.
    """
    ops = sorted({k for c in cube_list for k, _ in c.choice}, key=str)
    var = {(o, p): 1 + a * prob.m + p for a, o in enumerate(ops) for p in range(prob.m)}
    top = len(var)
    clauses = []
    for o in ops:
        lits = [var[(o, p)] for p in range(prob.m)]
        enc = CardEnc.equals(lits=lits, bound=1, top_id=top, encoding=EncType.pairwise)
        clauses += enc.clauses
    if not cube_list:
        raise IncompleteSplit("no cube: nothing is covered")
    for c in cube_list:
        clauses.append([-var[(o, p)] for o, p in c.choice])
    with Solver(name="cadical195", bootstrap_with=clauses) as s:
        if s.solve():
            model = set(x for x in s.get_model() if x > 0)
            missed = {o: p for (o, p), v in var.items() if v in model}
            raise IncompleteSplit(f"cubes of T={cube_list[0].T} miss the runs with ops on PEs {missed}")


def split_cover(mins: tuple[int, int, int], T: int, splits: list[tuple[int, int, int]]) -> None:
    """Raise IncompleteSplit unless `splits` holds every (L1, L2, L3) with Lk >= mins[k] and sum T:
    with global barriers, a run's phase lengths are such a triple (the lemmas bound each phase)."""
    every = {(a, b, T - a - b) for a in range(mins[0], T + 1) for b in range(mins[1], T + 1 - a)
             if T - a - b >= mins[2]}
    missed = every - set(splits)
    if missed:
        raise IncompleteSplit(f"phase splits of T={T} miss {sorted(missed)}")
