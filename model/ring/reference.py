"""Ground truth, float64: numpy self-attention in the paper's three variants (eqs. 1-3), and any
other declared computation evaluated term by term from its equations."""

from __future__ import annotations

import numpy as np

from ringproof.schedules.dsl import Op, Problem
from ringproof.schedules.problems import MASKED, PLAIN, SYMMETRIC, SYMMETRIC_ONCE


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, masked: bool = False,
              scale: float = 1.0) -> np.ndarray:
    """y = softmax(scale · q kᵀ) v with a row softmax; masked keeps only the terms B ≤ A. The paper
    omits the scale (1); scaled dot-product attention takes 1/√d."""
    scores = scale * (q @ k.T)
    if masked:
        scores = np.where(np.tril(np.ones_like(scores, dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v


def random_inputs(problem: Problem, n: int, d: int, seed: int = 0, sizes: dict | None = None) -> dict:
    """Inputs of a problem with entries in [-1, 1), reproducible from `seed`; `sizes`: the values
    of the other sizes its arrays' dimensions name."""
    rng = np.random.default_rng(seed)
    ext = {**(sizes or {}), "n": n, "d": d}
    return {a.name: rng.uniform(-1, 1, size=tuple(ext[x] for x in a.dims)) for a in problem.inputs}


def reference_outputs(problem: Problem, inputs: dict, scale: float = 1.0) -> dict:
    """{name: values} of every output of the problem."""
    if problem.outputs == (problem.output,):
        return {problem.output.name: reference_output(problem, inputs, scale)}
    return {o.name: evaluate_output(problem, inputs, scale, o) for o in problem.outputs}


def reference_output(problem: Problem, inputs: dict, scale: float = 1.0) -> np.ndarray:
    """The problem's (first) output: attention for the paper's three problems, else `evaluate_output`."""
    if problem in (SYMMETRIC, SYMMETRIC_ONCE):
        x = inputs["x"]
        return attention(x, x, x, scale=scale)
    if problem in (PLAIN, MASKED):
        return attention(inputs["q"], inputs["k"], inputs["v"], masked=problem == MASKED, scale=scale)
    return evaluate_output(problem, inputs, scale)


def evaluate_output(problem: Problem, inputs: dict, scale: float = 1.0, output=None) -> np.ndarray:
    """Every equation in order, as a sum (a max for MAX) over index grids (exp takes `scale` times its
    operand; an online term exp(a − b) reads b final);
    the values of `output` (default: the problem's first output)."""
    val = dict(inputs)
    ext = {}
    for a in problem.inputs:
        ext.update({dim: size for dim, size in zip(a.dims, np.shape(val[a.name]))})
    for e in problem.equations:
        dims = list(e.target.dims) + ([e.reduce] if e.reduce else [])
        grid = np.meshgrid(*[np.arange(1, ext[x] + 1) for x in dims], indexing="ij")
        refs = e.operands(None, *grid)
        ops = [val[r.array.name][tuple(np.asarray(i) - 1 for i in r.idx)] for r in refs]
        if e.op is Op.MAC:
            term = ops[0] * ops[1]
        elif e.op is Op.MAX:
            term = ops[0]
        elif e.op is Op.EAC:           # exp(a), or online exp(a − b)[·c] with b final
            term = np.exp(scale * (ops[0] - (ops[1] if len(ops) > 1 else 0.0))) * (ops[2] if len(ops) > 2 else 1.0)
        elif e.op is Op.NORM:
            term = ops[0] / ops[1]
        else:
            term = np.exp(scale * ops[0]) / ops[1]
        empty = 0.0 if e.op is not Op.MAX else -np.inf
        if e.where is not None:
            term = np.where(e.where(None, *grid), term, empty)
        if e.reduce:
            term = term.max(axis=-1) if e.op is Op.MAX else term.sum(axis=-1)
        val[e.target.name] = term
        if e.target in problem.transposable:      # one orientation computed: a[B, A] is a[A, B]
            a = val[e.target.name]
            val[e.target.name] = np.tril(a) + np.tril(a, -1).T
    return val[(output or problem.output).name]


def empty_sums(problem: Problem, n: int, d: int, output=None, sizes: dict | None = None) -> np.ndarray | None:
    """Where an output (default: the first) is a masked sum: the entries whose mask keeps no term
    (their value is 0, and a schedule need not touch them); else None."""
    e = problem.equation_for(output or problem.output)
    if e.where is None or not e.reduce:
        return None
    ext = {**(sizes or {}), "n": n, "d": d}
    dims = list(e.target.dims) + [e.reduce]
    grid = np.meshgrid(*[np.arange(1, ext[x] + 1) for x in dims], indexing="ij")
    return ~np.broadcast_to(e.where(None, *grid), grid[0].shape).any(axis=-1)
