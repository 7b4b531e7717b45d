"""Declaring a computation: arrays with their shapes and the terms each computed array needs.

    MATVEC = computation("matvec", {"a": "n d", "x": "d", "y": "n"}, ["y[A] += a[A, C] * x[C]"])

Arrays are named with their extents, one per index: "n", "d", another parameter ("k", "m") or a
size the schedule derives ("h", `Schedule(derived=...)`, which checks each is known). An equation
is einsum-like, one of

    t[I] += a[J] * b[K]          MAC: one term per value of the index not in I (the reduction)
    t[I] += exp(a[J])            EAC: likewise
    t[I] = exp(a[J]) / b[K]      DIV: one term per element of t
    t[I] max= a[J]               MAX: the running max over the reduction index
    t[I] += exp(a[J] - b[K])     EAC: b read final, as any operand
    t[I] += exp(a[J] - b[K]) * c[L]
    ... rescaled                 the same, online: b the reference (below)
    t[I] = a[J] / b[K]           NORM: the final division, one term per element of t
    ... if X <= Y [and ...]      only the terms with X ≤ Y (a mask)

Online softmax: a `rescaled` accumulator of exp(a − b) terms is kept relative to its reference b,
which the schedule may read while it still grows (a running max): each term first rescales the
accumulator by exp(ref − b) to b's value at that term, and NORM brings its two accumulators to one
reference before it divides. Its value then equals the equation's, read with b final, by the
online-softmax lemma (`ringproof.proofs.cp.online_softmax`), which every proof of such a schedule
cites. Without `rescaled`, b must be final when it is read (data-flow), as every operand.

Arrays that no equation computes are the inputs; the last equation's target is the output unless
`output` names another, or several (`output=("dq", "dk")`: each is compared with numpy and
placed); `symmetric` names computed arrays with t[A, B] = t[B, A] (a copy may be stored transposed):
each must follow from its equation (its terms and mask the same with A and B swapped, which holds
for every n), else the declaration is bad input.
`transposable` names computed arrays whose equation keeps one orientation (`if B <= A`, terms
the same with A and B swapped) and whose readers may name either (a[A, B] read as a[B, A]).
The paper's three variants of attention are declared this way in
`ringproof.schedules.problems`.
"""

from __future__ import annotations

import re

from ringproof.errors import BadInput
from ringproof.schedules.dsl import DIV, EAC, MAC, MAX, NORM, Array, Equation, Problem
from ringproof.schedules.expr import and_, le

_REF = r"(\w+)\[([\w\s,]+)\]"
_FORMS = (
    (MAC, re.compile(rf"^{_REF}\s*\+=\s*{_REF}\s*\*\s*{_REF}$")),
    (EAC, re.compile(rf"^{_REF}\s*\+=\s*exp\(\s*{_REF}\s*\)$")),
    (DIV, re.compile(rf"^{_REF}\s*=\s*exp\(\s*{_REF}\s*\)\s*/\s*{_REF}$")),
    (MAX, re.compile(rf"^{_REF}\s*max=\s*{_REF}$")),
    (EAC, re.compile(rf"^{_REF}\s*\+=\s*exp\(\s*{_REF}\s*-\s*{_REF}\s*\)$")),
    (EAC, re.compile(rf"^{_REF}\s*\+=\s*exp\(\s*{_REF}\s*-\s*{_REF}\s*\)\s*\*\s*{_REF}$")),
    (NORM, re.compile(rf"^{_REF}\s*=\s*{_REF}\s*/\s*{_REF}$")),
)
_BOUND = re.compile(r"^(\w+)\s*<=\s*(\w+)$")


def computation(name: str, arrays: dict, equations, output: str | None = None,
                symmetric=(), transposable=()) -> Problem:
    """The Problem declared by `arrays` ({name: "n d"}) and einsum-like `equations` (module doc)."""
    shapes = {a: tuple(dims.split()) for a, dims in arrays.items()}
    for a, dims in shapes.items():
        if not all(x.isidentifier() for x in dims):
            raise BadInput(f"{name}: array {a} has extents {dims}; each must name a size: n, d, another "
                           "parameter or one the schedule derives")
    parsed = [_parse(name, text, shapes) for text in equations]
    targets = [p[0] for p in parsed]
    made = {a: Array(a, shapes[a], is_input=a not in targets) for a in shapes}
    eqs = tuple(_equation(made, *p) for p in parsed)
    outs = (output,) if isinstance(output, str) else tuple(output or (targets[-1],))
    for out in outs:
        if out not in targets:
            raise BadInput(f"{name}: output {out} is not computed by any equation")
    return Problem(name, tuple(made[a] for a in shapes if a not in targets), eqs, made[outs[0]],
                   symmetric_pairs=tuple(made[a] for a in symmetric), outputs=tuple(made[o] for o in outs),
                   transposable=tuple(made[a] for a in transposable))


def _parse(name, text, shapes):
    body, _, mask = text.partition(" if ")
    body, online = (body.strip()[:-len("rescaled")], True) if body.strip().endswith(" rescaled") else (body, False)
    for op, form in _FORMS:
        hit = form.match(body.strip())
        if hit:
            break
    else:
        raise BadInput(f"{name}: cannot read equation {text!r}: expected t[I] += a[J] * b[K], "
                       "t[I] += exp(a[J]), t[I] = exp(a[J]) / b[K], t[I] max= a[J], "
                       "t[I] += exp(a[J] - b[K]) [* c[L]] or t[I] = a[J] / b[K], optionally 'if X <= Y'")
    groups = hit.groups()
    refs = [(groups[i], [x.strip() for x in groups[i + 1].split(",")]) for i in range(0, len(groups), 2)]
    for array, idx in refs:
        if array not in shapes:
            raise BadInput(f"{name}: {text!r} uses array {array}, which is not declared")
        if len(idx) != len(shapes[array]):
            raise BadInput(f"{name}: {array} takes {len(shapes[array])} indices, {text!r} gives {len(idx)}")
    (target, key), operands = refs[0], refs[1:]
    extent = {}
    for array, idx in refs:
        for x, dim in zip(idx, shapes[array]):
            if extent.setdefault(x, dim) != dim:
                raise BadInput(f"{name}: index {x} of {text!r} ranges over both {extent[x]} and {dim}")
    free = [x for _, idx in operands for x in idx if x not in key]
    if op in (DIV, NORM) and free:
        raise BadInput(f"{name}: {text!r}: a division has no reduction index, got {free[0]}")
    if online and not (op is EAC and len(operands) >= 2):
        raise BadInput(f"{name}: {text!r}: only a sum of exp(a - b) [* c] is rescaled")
    if op not in (DIV, NORM) and len(set(free)) != 1:
        raise BadInput(f"{name}: {text!r} needs exactly one reduction index (one not in {target}'s)")
    bounds = []
    for part in filter(None, (p.strip() for p in mask.split(" and "))):
        b = _BOUND.match(part)
        if not b or not {b.group(1), b.group(2)} <= set(extent):
            raise BadInput(f"{name}: cannot read mask {part!r} of {text!r}: expected X <= Y of its indices")
        bounds.append((b.group(1), b.group(2)))
    return target, key, op, operands, (free[0] if free else None), extent, bounds, online


def _equation(made, target, key, op, operands, r, extent, bounds, online):
    names = key + ([r] if r else [])

    def ix(values, idx):
        env = dict(zip(names, values))
        return tuple(env[x] for x in idx)

    def refs(P, *values):
        return tuple(made[a][ix(values, idx)] for a, idx in operands)

    def where(P, *values):
        env = dict(zip(names, values))
        conds = [le(env[x], env[y]) for x, y in bounds]
        return conds[0] if len(conds) == 1 else and_(*conds)

    reduce_at = None
    if r:
        reduce_at = next((i, idx.index(r)) for i, (_, idx) in enumerate(operands) if r in idx)
    return Equation(made[target], op, refs, reduce=extent[r] if r else None, reduce_at=reduce_at,
                    where=where if bounds else None, rescaled=online)
