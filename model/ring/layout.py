"""Integer ids for array elements of a problem, for concrete (numpy) evaluation."""

from __future__ import annotations

import math

import numpy as np

from ringproof.schedules.dsl import Array, Problem


class Layout:
    """Maps (array, 1-based indices) to a dense integer id; -1 marks an index out of range."""

    def __init__(self, problem: Problem, n: int, d: int, sizes: dict | None = None):
        """`sizes`: the value of every other size an array's dimension may name ({name: int}: the
        schedule's parameters and derived parameters)."""
        arrays = list(problem.inputs) + [e.target for e in problem.equations]
        self.arrays: list[Array] = arrays
        self.sizes = {**(sizes or {}), "n": n, "d": d}          # dimension name -> its size
        self.extents = {a.name: tuple(self.sizes[dim] for dim in a.dims) for a in arrays}
        self.offset, total = {}, 0
        for a in arrays:
            self.offset[a.name] = total
            total += math.prod(self.extents[a.name])     # exact at any size (a limit is checked on it)
        self.size = total

    def ids(self, ref, size: int) -> np.ndarray:
        """Ids of `ref` (whose indices may be arrays) for `size` iterations."""
        if ref.array.name not in self.offset:
            return np.full(size, -1, dtype=np.int32)
        flat = np.zeros(size, dtype=np.int32)
        inside = True
        for x, e in zip(ref.idx, self.extents[ref.array.name]):
            x = np.asarray(x, dtype=np.int32) - 1
            inside = inside & (x.view(np.uint32) < e)        # 1 ≤ index ≤ e
            flat *= e
            flat += x
        flat += self.offset[ref.array.name]
        if not np.all(inside):
            flat[~np.broadcast_to(inside, (size,))] = -1
        return flat

    def name(self, i: int) -> str:
        """Human-readable name of id i, e.g. 'w1[2, 3]'."""
        if i < 0:
            return "<out of range>"
        for a in reversed(self.arrays):
            if i >= self.offset[a.name]:
                idx = np.unravel_index(i - self.offset[a.name], self.extents[a.name])
                return f"{a.name}[{', '.join(str(int(t) + 1) for t in idx)}]"
        raise ValueError(i)

    def array_of(self, ids: np.ndarray) -> np.ndarray:
        """Index into `self.arrays` of each id."""
        starts = np.array([self.offset[a.name] for a in self.arrays])
        return np.searchsorted(starts, ids, side="right") - 1
