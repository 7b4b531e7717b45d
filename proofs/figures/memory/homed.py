"""The inputs homed on PE l, a closed form in k, m, kd and l counted over each input array's
indices with home(ref) = l (`nests.count`, indices read mod m split in radix m), and those of them
no iteration uses (`stays["unused"]`), each checked against the ring model's placement at every
size n, d ≤ 12. Every input arrives on its home PE at cycle 0: a lower bound of the peak on PE l
(`held`), and the occupancy's start (`stays`)."""

from __future__ import annotations

import numpy as np
import sympy

from ringproof.errors import InternalError
from ringproof.model.ring.layout import Layout
from ringproof.model.ring.trace import build_trace, homes, sizes
from ringproof.proofs.figures.counting import check_sizes, in_n_m_d, least_at, least_names, parameters, with_parameters
from ringproof.proofs.figures.nests import count, lifted, M, split_digits, Unknown
from ringproof.proofs.figures.spread import L, chunked, collapse, compile_form, on_pes
from ringproof.proofs.ring.session import Session
from ringproof.schedules.dsl import check_shape, params


def inputs_on(schedule, session=None):
    """(the inputs homed on PE l: a closed form in k, m, kd and l, "") or (None, why not)."""
    return _count(schedule, session, "inputs", {a.name: None for a in schedule.problem.inputs}, homed_at)


def unused_on(schedule, session=None):
    """(the inputs homed on PE l that no iteration uses, as the schedule marks them
    (`stays["unused"]`, checked by `stays.checks`): a closed form in k, m, kd and l, "") or (None,
    why not). They are held at cycle 0 only."""
    return _count(schedule, session, "unused", schedule.stays.unused, unused_at)


def _count(schedule, session, what: str, arrays: dict, measured):
    """(the data of the input arrays `arrays` ({name: None, or (P, indices) -> the condition on an
    element's indices}) homed on PE l, a closed form checked against `measured(schedule, n, m, d)`
    at every size n, d ≤ 12, "") or (None, why not); kept in the session under `what`."""
    session = session if session is not None else Session()
    hit = session.balanced.get((what, id(schedule)))
    if hit is not None and hit[0] is schedule:
        return hit[1]
    P = with_parameters(schedule, parameters(schedule.shape))
    scale, decider = chunked(schedule, session)      # an exact chunk k/c counted as c·k′ (no floor)
    total = sympy.Integer(0)
    for a in schedule.problem.inputs:
        if a.name not in arrays:
            continue
        syms = [sympy.Symbol(f"_{i}", integer=True) for i in range(len(a.dims))]
        if not all(hasattr(P, x) for x in a.dims):
            return None, f"the inputs of {a.name} on PE l are not counted (an extent that is not a size here)"
        loops = [(L, sympy.Integer(1), M)] + [(s, sympy.Integer(1), sympy.sympify(getattr(P, x)).xreplace(scale))
                                              for s, x in zip(syms, a.dims)]
        pe = sympy.sympify(schedule.home(P, a[tuple(syms)])).xreplace(scale)
        cond = sympy.Eq(pe, L)
        if arrays[a.name] is not None:
            cond = sympy.And(cond, sympy.sympify(arrays[a.name](P, tuple(syms))).xreplace(scale))
        loops, cond = split_digits(loops, cond, keep=1) or (loops, cond)
        try:
            total += count(loops, lifted(cond, loops, decider), decider, keep=1)
        except Unknown as e:
            return None, f"the {'unused ' if what == 'unused' else ''}inputs of {a.name} on PE l are not counted ({e})"
    back = {x: x / c for x, c in ((k, v / k) for k, v in scale.items())}
    total = collapse(sympy.expand(total), decider).xreplace(back)
    _check(schedule, total, measured, what)
    session.balanced[(what, id(schedule))] = (schedule, (total, ""))
    return total, ""


def homed_at(schedule, n: int, m: int, d: int) -> list[int]:
    """[inputs homed on PE 1, ..., PE m] at one size, from the ring model's placement."""
    P = params(n, m, d=check_shape(schedule, n, m, d))
    home = homes(schedule, P, Layout(schedule.problem, n, P.d, sizes(schedule, P)))
    return np.bincount(home[home > 0], minlength=m + 1)[1:m + 1].tolist()


def unused_at(schedule, n: int, m: int, d: int) -> list[int]:
    """[inputs homed on PE 1, ..., PE m that no iteration uses] at one size, on the ring model: of
    the arrays marked in `stays["unused"]`, those no active op reads and no send passes on."""
    tr = build_trace(schedule, n, m, d)
    used = np.zeros(tr.home.shape, bool)
    for pt in tr.phases:
        act = np.broadcast_to(np.asarray(pt.active, bool), np.shape(pt.pe))
        snd = np.broadcast_to(np.asarray(pt.send, bool), act.shape)
        read = [np.broadcast_to(o, act.shape)[act] for o in pt.operands]
        for ids in read + [np.broadcast_to(pt.sent, act.shape)[snd]]:
            used[ids[ids >= 0]] = True
    marked = np.isin(tr.layout.array_of(np.arange(tr.home.size)),
                     [i for i, a in enumerate(tr.layout.arrays) if a.name in schedule.stays.unused])
    home = tr.home[(tr.home > 0) & ~used & marked]
    return np.bincount(home, minlength=m + 1)[1:m + 1].tolist()


def _check(schedule, form, measured=None, what: str = "inputs") -> None:
    """The form against the ring model's placement (`measured`, else `homed_at`) at every size n, d ≤
    12: InternalError at the first disagreement."""
    names = least_names(schedule.shape)
    fn = compile_form(form, names)
    for n, m, d in check_sizes(schedule.shape):
        want = (measured or homed_at)(schedule, n, m, d)
        got = on_pes(fn, n, m, d, [int(v) for v in least_at(schedule.shape, n, m, d).values()])
        if got != want:
            raise InternalError(f"memory: the derived {what} on PE l, {in_n_m_d(form)}, give {got} at n={n}, "
                                f"m={m}, d={d}; the ring model places {want}")
