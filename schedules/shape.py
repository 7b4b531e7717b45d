"""The parameters of a schedule, written once: which sizes are free, their side conditions, and the
parameters derived from them.

Every schedule runs on a ring of `m` PEs. Its extents (the sequence length n, the head dimension d)
are multiples of m, `k = n/m` and `kd = d/m` their numbers of blocks. A `Shape` says which extents
are free and which are another under a second name: the paper's schedules are written for d = n
(`D_IS_N`: d is n and kd is k), the -general ones for any d (`ANY_D`). The DSL, the normalizer,
counting, formula sampling, every size enumerator and the counterexample record read the shape;
none of them is told "square" apart.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable

from ringproof.errors import BadInput
from ringproof.schedules.expr import Term, var

RING = "m"       # the number of PEs


@dataclass(frozen=True)
class Extent:
    """An extent `name` = `blocks`·m: both are parameters, with m | name and name ≥ 1."""

    name: str
    blocks: str


@dataclass(frozen=True)
class Shape:
    """`extents`: the free extents, in the order sizes are written (n, d); `same`: (alias, parameter)
    pairs, a parameter that is another under a second name (d = n, kd = k for the paper's shape);
    `requires`: a side condition beyond m | each extent, `(P) -> condition` written with the DSL
    helpers (`Schedule(requires=...)` sets it), which every size enumerator honours; `derived`:
    (name, definition) pairs of the parameters derived from the sizes (`Schedule(derived=...)`
    sets them): a function `(P) -> value`, or a `Least`."""

    name: str
    extents: tuple[Extent, ...]
    same: tuple[tuple[str, str], ...] = ()
    requires: Callable | None = field(default=None, compare=False)
    derived: tuple = field(default=(), compare=False)

    def admits(self, n: int, m: int, d: int | None = None) -> bool:
        """Do the sizes (m | each extent assumed) satisfy the side condition `requires`?"""
        return self.requires is None or bool(self.requires(self.params(m, n=n, d=n if d is None else d)))

    @property
    def free(self) -> tuple[str, ...]:
        """The sizes one chooses besides m (n; or n and d)."""
        return tuple(e.name for e in self.extents)

    def is_free(self, name: str) -> bool:
        return name in self.free

    def own(self, name: str, value):
        """`value` if `name` is a free size of this shape, else None (a record shows only those)."""
        return value if self.is_free(name) else None

    def record(self, values: Callable[[str], object]) -> SimpleNamespace:
        """The parameter record: `values(name)` for m, each free extent and its block count; an
        alias gets the value of the parameter it is."""
        out = {}
        for e in self.extents:          # in the order sizes are written: n, m, k, then d, kd
            out[e.name] = values(e.name)
            out.setdefault(RING, values(RING))
            out[e.blocks] = values(e.blocks)
        for alias, name in self.same:
            out[alias] = out[name]
        return SimpleNamespace(**out)

    def params(self, m: int, **sizes: int) -> SimpleNamespace:
        """The concrete record at ring size m and the free sizes given (an extent not given is n,
        as in the paper); block counts are extent // m."""
        given = {RING: m}
        for e in self.extents:
            given[e.name] = sizes.get(e.name, sizes.get(self.extents[0].name))
            given[e.blocks] = given[e.name] // m
        return self.record(given.__getitem__)

    def sizes(self, max_size: int, max_m: int | None = None) -> list[tuple[int, int, int]]:
        """Every (n, m, d) satisfying the side conditions with each extent ≤ max_size (and m ≤
        max_m), by n, then m, then d (d = n where d is not free)."""
        return [(n, m, d) for n, m in divisible(max_size, max_m)
                for d in (range(m, max_size + 1, m) if self.is_free("d") else (n,)) if self.admits(n, m, d)]

    def breaking(self, which: str, max_size: int) -> list[tuple[int, int, int]]:
        """(n, d, m), each free extent ≤ max_size, where m ≥ 2 divides every free extent but
        `which` (for d, at sizes the side condition allows: it constrains n and m), or, for
        `which` = "requires", m divides every free extent and the side condition fails; smallest
        n + d first."""
        out = []
        for n in range(1, max_size + 1):
            for d in (range(1, max_size + 1) if self.is_free("d") else (n,)):
                at = {"n": n, "d": d}
                for m in range(1 if which == "requires" else 2, max(n, d) + 1):
                    broken = {e for e in self.free if at[e] % m}
                    if which == "requires":
                        if not broken and not self.admits(n, m, d):
                            out.append((n, d, m))
                    elif broken == {which} and (which == self.extents[0].name or self.admits(n, m, d)):
                        out.append((n, d, m))
        return sorted(out, key=lambda t: (t[0] + t[1], t[0], t[2]))


@dataclass(frozen=True)
class Least:
    """A derived size defined by a characterising condition: the least integer K in lo..hi with
    `cond(P, K)`, e.g. `Least(lambda P, K: ge(K * (K + 3), 2 * P.n), hi=lambda P: P.n)` for the
    least K with K(K+3)/2 ≥ n. `hi(P)` (and `lo`, an int or `(P) -> value`) bound the search; the
    prover proves cond(P, hi(P)) and lo ≤ hi(P) for every size (so K exists) and then knows K only
    by lo ≤ K ≤ hi, cond(P, K) and K = lo or not cond(P, K − 1) -- exactly the least K where cond
    holds upward of it. Concretely K is found by search from lo."""

    cond: Callable
    hi: Callable
    lo: object = 1

    def bounds(self, P):
        """(lo, hi) at the record P."""
        return (self.lo(P) if callable(self.lo) else self.lo), self.hi(P)

    def value(self, P, name: str):
        """K at the record P: the least K by search where P's sizes are ints, else K as a symbol of
        P's backend (a prover's Term, a sympy Symbol), which the prover pins by the conditions."""
        n, sympy = P.n, sys.modules.get("sympy")      # no sympy loaded: no sympy value either
        if isinstance(n, Term):
            return var(name)
        if sympy is not None and isinstance(n, sympy.Basic):
            return sympy.Symbol(name, integer=True)
        lo, hi = (int(x) for x in self.bounds(P))
        for K in range(lo, hi + 1):
            if bool(self.cond(P, K)):
                return K
        sizes = ", ".join(f"{x}={getattr(P, x)}" for x in ("n", RING, "d") if hasattr(P, x))
        raise BadInput(f"derived parameter {name}: no {name} in {lo}..{hi} satisfies its condition at {sizes}")


def derived_values(shape: Shape, n: int, m: int, d: int | None = None, least_only: bool = False) -> dict:
    """{name: value} of the shape's derived parameters (only its `Least` ones if `least_only`) at one
    size (a `Least` found by search)."""
    if not any(isinstance(fn, Least) or not least_only for _, fn in shape.derived):
        return {}
    from ringproof.schedules.dsl import with_derived
    P = with_derived(dict(shape.derived), shape.params(m, n=n, d=n if d is None else d))
    return {name: getattr(P, name) for name, fn in shape.derived if isinstance(fn, Least) or not least_only}


def divisible(max_n: int, max_m: int | None = None):
    """All (n, m) with m | n, n ≤ max_n (and m ≤ max_m)."""
    return [(n, m) for n in range(1, max_n + 1) for m in range(1, n + 1)
            if n % m == 0 and (max_m is None or m <= max_m)]


N_EXTENT, D_EXTENT = Extent("n", "k"), Extent("d", "kd")
D_IS_N = Shape("d = n", (N_EXTENT,), same=(("d", "n"), ("kd", "k")))
ANY_D = Shape("any d", (N_EXTENT, D_EXTENT))
SHAPES = (D_IS_N, ANY_D)
# Every shape's parameter names, as its record lists them (loop bounds may name them).
PARAMETERS = tuple(dict.fromkeys(name for shape in SHAPES for name in vars(shape.record(str))))

# Places that name the parameters one by one: (where, the names it handles), re-checked by `incomplete`.
_CHECKS: list = []


class IncompleteParameters(Exception):
    """A place that names the parameters one by one does not handle every parameter."""


def require_parameters(where: str, handled) -> None:
    """Raise IncompleteParameters unless `handled` is exactly `PARAMETERS` (recorded, so a test can
    repeat the check against a longer list)."""
    _CHECKS.append((where, frozenset(handled)))
    problem = incomplete()
    if problem:
        raise IncompleteParameters("; ".join(f"{w}: {p}" for w, p in problem.items()))


def incomplete(parameters=None) -> dict[str, str]:
    """Each recorded place that does not handle exactly `parameters` (default: `PARAMETERS`) -> what
    it leaves out or has too many."""
    want = set(PARAMETERS if parameters is None else parameters)
    out = {}
    for where, handled in _CHECKS:
        missing, extra = sorted(want - handled), sorted(handled - want)
        if missing or extra:
            out[where] = ", ".join([f"not handled: {' '.join(missing)}"] * bool(missing)
                                   + [f"not a parameter: {' '.join(extra)}"] * bool(extra))
    return out


require_parameters("Shape.sizes and Shape.breaking (n, d as extents)", ("n", RING, "k", "d", "kd"))
