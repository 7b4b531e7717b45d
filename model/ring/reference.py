"""Ground truth: numpy self-attention in the paper's three variants (eqs. 1-3), float64."""

from __future__ import annotations

import numpy as np


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, masked: bool = False,
              scale: float = 1.0) -> np.ndarray:
    """y = softmax(scale · q kᵀ) v with a row softmax; masked keeps only the terms B ≤ A. The paper
    omits the scale (1); scaled dot-product attention takes 1/√d."""
    scores = scale * (q @ k.T)
    if masked:
        scores = np.where(np.tril(np.ones_like(scores, dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v


def random_inputs(problem_name: str, n: int, d: int, seed: int = 0) -> dict:
    """Inputs of a problem with entries in [-1, 1), reproducible from `seed`."""
    rng = np.random.default_rng(seed)
    names = ("x",) if problem_name == "symmetric" else ("q", "k", "v")
    return {name: rng.uniform(-1, 1, size=(n, d)) for name in names}


def reference_output(problem_name: str, inputs: dict, scale: float = 1.0) -> np.ndarray:
    if problem_name == "symmetric":
        x = inputs["x"]
        return attention(x, x, x, scale=scale)
    return attention(inputs["q"], inputs["k"], inputs["v"], masked=problem_name == "masked", scale=scale)
