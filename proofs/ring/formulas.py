"""The formula proved is the formula that runs: a schedule's functions, run on ints at sampled
iterations of a few sizes, must agree with their symbolic terms evaluated at the same point.

The prover reads a phase's step once, on symbolic indices; the simulator and the bounded tier call it
on ints. Python control flow that depends on which kind of value it sees (`isinstance`, a global
counter, ...) would make the two differ, and a proof would be about a formula that never runs. Any
difference is bad input naming the schedule file and line, checked before anything is proved.
"""

from __future__ import annotations

import itertools
import random
from types import SimpleNamespace

from ringproof.errors import BadInput
from ringproof.proofs.ring.normalize import PARAMS
from ringproof.schedules.dsl import At, Either, Phase, Ref, Schedule, Send, Step, params, where, with_derived
from ringproof.schedules.expr import INT, Term, var

SIZES = ((1, 1), (2, 1), (4, 2), (6, 3), (6, 2), (8, 4), (9, 3))   # (n, m), m | n; d = n
D_SIZES = ((2, 1, 3), (3, 1, 5), (4, 2, 6), (6, 3, 3), (6, 2, 4), (8, 4, 12))   # (n, m, d), d ≠ n
PER_SIZE = 24          # sampled iterations per phase and size


def check_formulas(schedule: Schedule, sizes=SIZES, per_size: int = PER_SIZE, seed: int = 0) -> None:
    """Raise BadInput at the first sampled point where a phase's concrete step (or loop bound)
    differs from its symbolic one. `sizes`: (n, m) or (n, m, d); a schedule where d is a parameter
    of its own (its shape has d free) is sampled at D_SIZES (d ≠ n) too."""
    rng = random.Random(seed)
    shapes = [(s[0], s[1], s[2] if len(s) > 2 else s[0]) for s in sizes]
    if schedule.shape.is_free("d"):
        shapes += list(D_SIZES)
    shapes = admitted(schedule, shapes)
    for phase in schedule.phases:
        sym_ix = SimpleNamespace(**{name: var(name) for name in phase.index_names})
        symbolic = _leaves(phase.step(PARAMS, sym_ix))
        bounds = [lp.bounds(PARAMS, sym_ix) for lp in phase.loops]
        for n, m, d in shapes:
            P = params(n, m, d=d)
            env = vars(with_derived(schedule.derived, P))     # a Least's symbol stands for its value
            for ix in _sample(phase, P, rng, per_size):
                point = {**env, **ix}
                for lp, (lo, hi) in zip(phase.loops, bounds):
                    if lp.name not in ix:
                        break
                    got = lp.bounds(P, SimpleNamespace(**ix))
                    _compare(phase, f"the bounds of loop {lp.name}", got, (lo, hi), point, {})
                concrete = _leaves(phase.step(P, SimpleNamespace(**ix)))
                _compare_steps(phase, concrete, symbolic, point)


def admitted(schedule: Schedule, sizes) -> list:
    """The (n, m, d) the schedule's side condition allows; at least four (more drawn from n ≤ 24,
    d = n)."""
    out = [(n, m, d) for n, m, d in sizes if schedule.admits(n, m, d)]
    more = ((n, m, n) for n in range(1, 25) for m in range(1, n + 1) if n % m == 0 and (n, m, n) not in out)
    for size in more:
        if len(out) >= 4:
            break
        if schedule.admits(*size):
            out.append(size)
    return out


def _sample(phase: Phase, P, rng: random.Random, count: int) -> list[dict]:
    """`count` iterations of `phase` at sizes P, each index drawn within its bounds given the outer
    ones: half of the draws at a bound or next to one (where special cases live), half uniform.
    A draw that meets an empty range is dropped."""
    out = []
    for _ in range(count):
        ix: dict = {}
        for lp in phase.loops + (None,):
            lo, hi = (1, P.m) if lp is None else (int(b) for b in lp.bounds(P, SimpleNamespace(**ix)))
            if lo > hi:
                break
            pick = rng.choice((lo, hi, min(lo + 1, hi), max(hi - 1, lo), rng.randint(lo, hi)))
            ix["l" if lp is None else lp.name] = pick if rng.random() < 0.5 else rng.randint(lo, hi)
        else:
            out.append(ix)
    return out


def _leaves(x, path: str = "step") -> list:
    """A Step flattened to (path, value) pairs: values are formulas or ints; the shape (which
    fields are set, arrays, ops, phase names) is part of the paths."""
    if isinstance(x, Step):
        out = [(f"{path}.op:{x.op.value}", None)]
        for name in ("pe", "target", "operands", "send", "guard", "first", "prev", "sources"):
            out += _leaves(getattr(x, name), f"{path}.{name}")
        return out
    if isinstance(x, Ref):
        return [(f"{path}:{x.array.name}", None)] + list(
            itertools.chain(*[_leaves(v, f"{path}[{i}]") for i, v in enumerate(x.idx)]))
    if isinstance(x, Send):
        return list(itertools.chain(*[_leaves(getattr(x, f), f"{path}.{f}")
                                      for f in ("datum", "when", "copy", "as_", "source")]))
    if isinstance(x, At):
        return [(f"{path}:At({x.phase})", tuple(sorted(x.idx)))] + list(
            itertools.chain(*[_leaves(x.idx[k], f"{path}.{k}") for k in sorted(x.idx)]))
    if isinstance(x, Either):
        return list(itertools.chain(*[_leaves(getattr(x, f), f"{path}.{f}")
                                      for f in ("cond", "then", "other")]))
    if isinstance(x, (tuple, list)):
        return [(f"{path}:len", len(x))] + list(
            itertools.chain(*[_leaves(v, f"{path}[{i}]") for i, v in enumerate(x)]))
    if isinstance(x, Term) or _is_value(x) or x is None:
        return [(path, x)]
    return [(f"{path}:{x!r}", None)]                 # HOME and other tokens: by name


def _is_value(x) -> bool:
    if isinstance(x, (int, bool)):
        return True
    import numpy as np

    return isinstance(x, (np.integer, np.bool_))


def _compare_steps(phase: Phase, concrete: list, symbolic: list, point: dict) -> None:
    if [p for p, _ in concrete] != [p for p, _ in symbolic]:
        got = {p for p, _ in concrete} ^ {p for p, _ in symbolic}
        shown = sorted(got)[0] if got else "the order of its fields"
        _differ(phase, f"the shape of its step differs ({shown})", point)
    memo: dict = {}
    for (path, c), (_, s) in zip(concrete, symbolic):
        if path.endswith(":len") or ":At(" in path:
            if c != s:
                _differ(phase, f"{path} is {c} on ints but {s} symbolically", point)
            continue
        _compare(phase, path, c, s, point, memo)


def _compare(phase: Phase, what: str, concrete, symbolic, point: dict, memo: dict) -> None:
    if isinstance(concrete, tuple):
        for c, s in zip(concrete, symbolic):
            _compare(phase, what, c, s, point, memo)
        return
    if concrete is None or symbolic is None:
        if concrete is not symbolic:
            _differ(phase, f"{what} is {concrete!r} on ints but {symbolic!r} symbolically", point)
        return
    try:
        value = _value(symbolic, point, memo) if isinstance(symbolic, Term) else symbolic
    except ZeroDivisionError:
        return       # a witness formula outside its domain (e.g. mod by 0): nothing to compare
    except KeyError as e:
        fn = getattr(phase.step, "__wrapped__", phase.step)
        raise BadInput(f"{where(fn)}: phase {phase.name}: {what} uses {e.args[0]!r}, which is neither "
                       f"an index of the phase nor a parameter") from None
    if int(value) != int(concrete):
        _differ(phase, f"{what} is {int(concrete)} on ints but its formula {symbolic!r} gives "
                f"{int(value)}", point)


_INT_OPS = INT.operations()     # every operator of schedules/operators.py on ints


def _value(t: Term, env: dict, memo: dict):
    """Term t on ints (the int backend of `ringproof.schedules.expr`, memoized on shared sub-terms)."""
    hit = memo.get(id(t))
    if hit is not None:
        return hit
    if t.op == "var":
        out = env[t.args[0]]
    elif t.op in ("const", "bool"):
        out = t.args[0]
    else:
        out = _INT_OPS[t.op](*[_value(a, env, memo) for a in t.args])
    memo[id(t)] = out
    return out


def _differ(phase: Phase, what: str, point: dict) -> None:
    fn = getattr(phase.step, "__wrapped__", phase.step)
    at = ", ".join(f"{k}={v}" for k, v in point.items() if k not in ("k", "kd"))
    raise BadInput(f"{where(fn)}: phase {phase.name}: the step run on ints is not the formula the "
                   f"prover would check: at {at}, {what} (Python control flow on index values? "
                   "use ite/eq/lt/... from ringproof)")
