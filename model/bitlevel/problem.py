"""What one instance of the machine must compute: ops, the data they read, add to and produce."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

from ringproof.model.bitlevel.types import PHASE_OF, VARIANTS
from ringproof.errors import BadInput


@dataclass(frozen=True)
class OpSpec:
    key: tuple  # (kind, i, j, l)
    reads: tuple  # final data that must be on the PE
    acc: tuple | None  # accumulator the op adds to
    out: tuple | None  # datum the op leaves on its PE

    @property
    def phase(self) -> int:
        return PHASE_OF[self.key[0]]


def spread_cycles(r: int, m: int) -> int:
    """Least K with sum_{c=1..K} min(m, c+1) >= r: cycles after its last EAC before r DIVs of a row
    can have run, since c cycles after s_i is finished it is on at most min(m, c+1) PEs (lemma L2b)."""
    k, reach = 0, 0
    while reach < r:
        k += 1
        reach += min(m, k + 1)
    return k


def op_count(variant: str, n: int, d: int | None = None) -> int:
    """len(BitProblem(variant, n, m, d).ops), without building it: MAC1 d per pair (symmetric: per
    unordered pair), EAC and DIV one per pair, MAC3 d per pair; masked keeps the pairs j ≤ i."""
    d = n if d is None else d
    pairs = n * (n + 1) // 2 if variant == "masked" else n * n
    mac1 = n * (n + 1) // 2 * d if variant == "symmetric" else pairs * d
    return mac1 + 2 * pairs + pairs * d


class BitProblem:
    """The op set of `variant` attention for sizes n, d on m PEs, and where the inputs start."""

    def __init__(self, variant: str, n: int, m: int, d: int | None = None, placement: dict | None = None):
        d = n if d is None else d
        if variant not in VARIANTS:
            raise BadInput(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
        for name, value in (("n", n), ("m", m), ("d", d)):
            if not isinstance(value, int) or value < 1:
                raise BadInput(f"expected a positive integer, got {name}={value!r}")
        self.variant, self.n, self.m, self.d = variant, n, m, d
        sym = variant == "symmetric"
        specs = []
        for i in range(n):
            for j in range(n):
                if variant == "masked" and j > i:
                    continue
                w1 = ("w1", min(i, j), max(i, j)) if sym else ("w1", i, j)
                for l in range(d):
                    if not sym or i <= j:
                        reads = (("x", i, l), ("x", j, l)) if sym else (("q", i, l), ("k", j, l))
                        specs.append(OpSpec(("MAC1", i, j, l), reads, w1, None))
                specs.append(OpSpec(("EAC", i, j, None), (w1,), ("s", i), ("e", i, j)))
                specs.append(OpSpec(("DIV", i, j, None), (("e", i, j), ("s", i)), None, ("w", i, j)))
                for l in range(d):
                    v = ("x", j, l) if sym else ("v", j, l)
                    specs.append(OpSpec(("MAC3", i, j, l), (("w", i, j), v), ("y", i, l), None))
        self._set_ops(tuple(sorted(specs, key=lambda s: s.phase)))
        names = ("x",) if sym else ("q", "k", "v")
        self.inputs = tuple((a, i, l) for a in names for i in range(n) for l in range(d))
        self.initial = self._place(placement or {})

    def _set_ops(self, ops: tuple[OpSpec, ...]) -> None:
        self.ops = ops
        self.index = {s.key: k for k, s in enumerate(ops)}
        self.acc_ops: dict[tuple, list[int]] = {}
        for k, s in enumerate(ops):
            if s.acc:
                self.acc_ops.setdefault(s.acc, []).append(k)

    def phase_one(self) -> BitProblem:
        """The relaxation that keeps only the MAC1 ops (same inputs and placement)."""
        return self.up_to(1)

    def up_to(self, phase: int) -> BitProblem:
        """The relaxation that keeps the ops of phases 1..`phase` (same inputs and placement): the
        first cycles of any run, up to that phase's barrier, are a run of it."""
        sub = copy.copy(self)
        sub._set_ops(tuple(s for s in self.ops if s.phase <= phase))
        return sub

    def _place(self, placement: dict) -> dict[tuple, frozenset]:
        known = set(self.inputs)
        out = {}
        for datum, where in placement.items():
            if datum not in known:
                raise BadInput(f"placement names {datum!r}, not an input of {self.variant} attention")
        for datum in self.inputs:
            where = placement.get(datum, datum[1] % self.m)
            pes = frozenset([where] if isinstance(where, int) else where)
            if not pes or any(not isinstance(p, int) or not 0 <= p < self.m for p in pes):
                raise BadInput(f"placement puts {datum!r} on {where!r}; expected PEs in 0..{self.m - 1}")
            out[datum] = pes
        return out

    def count(self, phase: int) -> int:
        return sum(1 for s in self.ops if s.phase == phase)

    def row_eacs(self) -> dict[int, int]:
        """Row i -> number of EACs feeding s_i (its DIVs wait for all of them)."""
        rows: dict[int, int] = {}
        for s in self.ops:
            if s.key[0] == "EAC":
                rows[s.key[1]] = rows.get(s.key[1], 0) + 1
        return rows

    def phase_minimum(self, spread: bool = True) -> tuple[int, int, int]:
        """Sound lower bounds on the length of each phase (docs/bitlevel.md, lemmas L1-L3); without
        `spread`, phase 2 only counts one cycle for a row's DIVs after its EACs (lemma L2a)."""
        m = self.m
        longest = max(len(v) for a, v in self.acc_ops.items() if a[0] == "w1")
        p1 = max(math.ceil(self.count(1) / m), longest)
        after = (lambda r: spread_cycles(r, m)) if spread else (lambda r: 1)
        p2 = max([math.ceil(self.count(2) / m)] + [r + after(r) for r in self.row_eacs().values()])
        p3 = max(math.ceil(self.count(3) / m), max(len(v) for a, v in self.acc_ops.items() if a[0] == "y"))
        return p1, p2, p3

    def free_minimum(self) -> int:
        """A lower bound on T that needs no barrier (docs/bitlevel.md, lemmas L1' and L5): every op
        takes a slot, and row i's chain — w' (d MAC1s), its r_i EACs into s_i, a DIV, then the r_i
        MAC3s into each y_i[l], each accumulator one op per cycle — lasts d + 2 r_i + 1 cycles."""
        chain = max(self.d + 2 * r + 1 for r in self.row_eacs().values())
        return max(math.ceil(len(self.ops) / self.m), chain)
