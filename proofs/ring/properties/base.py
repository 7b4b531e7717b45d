"""The records and building blocks both twins of a check use.

A *check kind* is declared once (`Kind`): its property, its name template, its symbolic generator
(obligations discharged by Z3 for all n, m) and its concrete twin (the same definition enumerated
on one numpy trace, used by the bounded tier and to replay every Z3 counterexample). Both twins
name what they report through the kind, so their names cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

import numpy as np

from ringproof.model.ring.machine import describe
from ringproof.model.ring.trace import PhaseTrace
from ringproof.proofs.ring.normalize import PARAMS, Ctx
from ringproof.schedules.dsl import Op, Phase, Ref, Schedule
from ringproof.schedules.expr import and_, between, lift, not_, or_, var
from ringproof.schedules.shape import D_IS_N, PARAMETERS, Shape

# --------------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Check:
    """One symbolic query: `build(ctx)` -> (iterations {role: It}, hypotheses [Term], goal Term);
    the goal holds for every (n, m) of the tier iff assumptions ∧ hypotheses ∧ ¬goal is unsat."""

    property: str
    phase: str
    name: str
    build: Callable[[Ctx], tuple]
    kind: str = ""
    shape: Shape = D_IS_N   # the schedule's free sizes
    requires: object = None  # the schedule's side condition (a Term), assumed by the query
    chunk: int = 1          # c > 1: the side condition makes c divide k; blocks of h = k/c


class Finding:
    """A violation found by enumeration: which check, a message, the iterations involved."""

    def __init__(self, prop, phase, check, message, iterations=(), kind: str = ""):
        self.property, self.phase, self.check, self.message = prop, phase, check, message
        self.iterations = tuple(iterations)
        self.kind = kind
        self.d = None       # the d of the instance, set by the bounded sweep

    def __repr__(self):
        return f"{self.property}/{self.phase}: {self.check}: {self.message}"


SITE_DECIDED = ("ring-locality", "data-flow")   # what a kind with prop None reports, site by site


@dataclass(frozen=True)
class Kind:
    """One kind of check, both twins side by side.

    `symbolic(S, P)` gives the Checks of phase P (`Phase` None: schedule-level kinds);
    `concrete(trace, k, pt, limit)` the Findings on phase number k of a trace (schedule-level:
    `concrete(trace, limit)`). `prop` is the property, or None where each site decides between
    ring-locality and data-flow (the generators pass it to `check`/`finding`).
    """

    key: str
    prop: str | None
    template: str
    symbolic: Callable
    concrete: Callable
    schedule_level: bool = False

    @property
    def properties(self) -> tuple[str, ...]:
        """The properties this kind's checks report."""
        return (self.prop,) if self.prop is not None else SITE_DECIDED

    def name(self, **kw) -> str:
        return self.template.format(**kw)

    def check(self, phase: str, build, prop: str | None = None, **kw) -> Check:
        return Check(prop or self.prop, phase, self.name(**kw), build, self.key)

    def finding(self, phase: str, message: str, iterations=(), prop: str | None = None, **kw) -> Finding:
        return Finding(prop or self.prop, phase, self.name(**kw), message, iterations, self.key)


# --------------------------------------------------------------------------------- symbolic helpers


def implies(a, b):
    return or_(not_(a), b)


def extent(dim: str):
    """The symbolic size an array's dimension ranges over: a parameter, or a derived parameter by
    name (the prover reads it from the schedule's shape)."""
    return getattr(PARAMS, dim) if dim in PARAMETERS else var(dim)


def in_range(ref: Ref | None):
    if ref is None:
        return lift(True)
    return and_(*[between(1, x, extent(d)) for x, d in zip(ref.idx, ref.array.dims)])


def generic_step(phase: Phase):
    """The step of `phase` at symbolic indices (one variable per index name)."""
    return phase.step(PARAMS, SimpleNamespace(**{name: var(name) for name in phase.index_names}))


def phases_computing(schedule: Schedule, array) -> list[Phase]:
    out = []
    for p in schedule.phases:
        st = generic_step(p)
        if st.target is not None and st.target.array == array and st.op is not Op.MOVE:
            out.append(p)
    return out


def term_key(eqn, st, transposable=()):
    """The key of the term a step does: its target's indices and the reduction index.

    An operand of a `transposable` array (a[A, B] = a[B, A]) may be named in either orientation; its
    reduction index is then the sum of its two indices less the one the equation fixes (e.g.
    s[A] += exp(w1[X, Y]) with {X, Y} = {A, B}: B = X + Y − A)."""
    key = list(st.target.idx)
    if eqn.reduce:
        o, pos = eqn.reduce_at
        ref = st.operands[o]
        if ref.array in transposable and len(ref.idx) == 2:
            fixed = eqn.operands(None, *key, 0)[o].idx[1 - pos]
            key.append(ref.idx[0] + ref.idx[1] - fixed)
        else:
            key.append(ref.idx[pos])
    return key


def transposed_ref(ref):
    """a[B, A] for a[A, B]."""
    return type(ref)(ref.array, (ref.idx[1], ref.idx[0]))


# --------------------------------------------------------------------------------- concrete helpers


def computes(pt: PhaseTrace, array) -> bool:
    return pt.step.target is not None and pt.step.target.array == array and pt.op is not Op.MOVE


def first_bad(trace, k, bad, limit):
    return [describe(trace, k, int(p)) for p in np.nonzero(bad)[0][:limit]]


def first_at(trace, k, positions, limit):
    """`first_bad` given the ascending positions of the bad iterations."""
    return [describe(trace, k, int(p)) for p in positions[:limit]]


def subset(values, at: np.ndarray) -> np.ndarray:
    """values (one per iteration, or one broadcast value) at the ascending positions `at` (all of
    them: values itself, no copy)."""
    values = np.asarray(values)
    if not values.ndim:
        return np.broadcast_to(values, at.shape)
    return values if at.size == values.size else values[at]


def _small_range(values: np.ndarray) -> bool:
    """Whether a table indexed by value (a bincount) costs no more than the values themselves."""
    return int(values.max()) - int(values.min()) <= 4 * values.size + 4096


def any_repeated(values: np.ndarray) -> bool:
    """Whether some value occurs twice: the twins' quick test before they sort to name the pair."""
    if values.size < 2:
        return False
    if not _small_range(values):
        v = np.sort(values)
        return bool((v[1:] == v[:-1]).any())
    return bool(np.bincount(values - values.min()).max() > 1)


def any_shared(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether a value occurs in both a and b."""
    if not a.size or not b.size:
        return False
    both = np.concatenate([a, b])
    if not _small_range(both):
        return np.intersect1d(a, b).size > 0
    lo = both.min()
    seen = np.zeros(int(both.max() - lo) + 1, dtype=bool)
    seen[a - lo] = True
    return bool(seen[b - lo].any())


def locate(trace, phase_name, idx, size):
    """The phase a witness names and the positions of the witnessed iterations (-1: none)."""
    q = trace.phase(phase_name)
    if q.size == 0:
        return q, np.full(size, -1)
    full = {n_: np.broadcast_to(np.asarray(idx[n_], dtype=np.int32), (size,)) for n_ in q.phase.index_names}
    return q, q.locate(full)
