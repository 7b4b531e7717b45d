"""Rotation-invariant runs: a restriction for witness search in the plain and symmetric variants.

Rotating by g (PE p -> p+g mod m, every row/column index i -> i+g mod n) maps the ops, data and
initial placement of plain and symmetric attention onto themselves when n = m and inputs start on
PE i. A run equal to its own rotation is then fixed by g's group; `invariance_clauses` forces this,
so the CNF has 1/|group| of its freedom. It removes valid runs (a SAT answer is a witness, an UNSAT
answer proves nothing). Masked attention (j <= i) is not rotation-invariant: no step applies.
"""

from __future__ import annotations

from ringproof.model.bitlevel.problem import BitProblem


def _rotate(datum: tuple, g: int, n: int, symmetric: bool) -> tuple:
    name, *idx = datum
    if name in ("x", "q", "k", "v", "y"):  # (i, l): only the row index turns
        return (name, (idx[0] + g) % n, idx[1])
    if name == "s":
        return (name, (idx[0] + g) % n)
    i, j = (idx[0] + g) % n, (idx[1] + g) % n
    return (name, min(i, j), max(i, j)) if symmetric and name == "w1" else (name, i, j)


def _rotate_op(key: tuple, g: int, n: int, symmetric: bool) -> tuple:
    kind, i, j, l = key
    i, j = (i + g) % n, (j + g) % n
    if symmetric and kind == "MAC1":
        i, j = min(i, j), max(i, j)
    return (kind, i, j, l)


def rotation_step(prob: BitProblem) -> int | None:
    """Smallest g (a proper divisor of n) whose rotations map the problem onto itself and fix no op,
    or None. An op fixed by a rotation that moves its PE could not run exactly once (symmetric, even
    n: w'_{i,i+n/2} is fixed by the half turn, so g = 2 there)."""
    n, sym = prob.n, prob.variant == "symmetric"
    if prob.variant == "masked" or prob.m != n or n < 2:
        return None
    keys = set(prob.index)
    for g in (g for g in range(1, n) if n % g == 0):
        turns = range(g, n, g)
        if any(_rotate(x, t, n, sym) not in prob.initial or prob.initial[_rotate(x, t, n, sym)]
               != frozenset((p + t) % n for p in pes) for x, pes in prob.initial.items() for t in turns):
            continue
        if all(_rotate_op(k, t, n, sym) in keys and _rotate_op(k, t, n, sym) != k for k in keys for t in turns):
            return g
    return None


def invariance_clauses(enc, g: int) -> list[list[int]]:
    """Clauses x <-> rotate(x) for the op, memory, send and move variables of `enc`, rotation by g."""
    prob, n, m = enc.prob, enc.prob.n, enc.m
    sym = prob.variant == "symmetric"
    out = []

    def tie(a: int, b: int) -> None:
        if a != b:
            out.extend(([-a, b], [a, -b]))

    for k, s in enumerate(prob.ops):
        r = prob.index[_rotate_op(s.key, g, n, sym)]
        for (p, t), v in enc.opv[k].items():
            tie(v, enc.op(r, (p + g) % m, t))
    for table in (enc.at, enc.send, enc.mv):
        for (x, p, t), v in table.items():
            w = table.get((_rotate(x, g, n, sym), (p + g) % m, t))
            if w is None:  # the rotated variable does not exist: both must be false
                out.append([-v])
            else:
                tie(v, w)
    return out
