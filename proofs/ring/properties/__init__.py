"""The registry of properties: every kind of check, declared once with both twins side by side.

    property        kinds (module)
    well-formed     well-formed.ranges                                   (well_formed.py)
    coverage        coverage.terms, .one-phase, .injective, .onto,
                    .computed                                            (coverage.py)
                    .joint-injective, .joint-onto (an array several
                    phases compute, with a joint inverse)                (joint.py)
    no-conflict     no-conflict.slots, .shared (lock-step groups)        (no_conflict.py)
    ring-locality   running-sums.prev, .first, .fork                     (running_sums.py)
    ring-locality / operands.source, .final (local witness: ring-locality,
    data-flow       earlier phase: data-flow), operands.forwarded        (operands.py)
    placement       placement.ends, .witness, .last (per output array,
                    where the schedule declares `placement`)             (placement.py)

`derive` gives the symbolic checks of a schedule (discharged by Z3 for all n, m); `check_trace`
runs their concrete twins on one trace (the bounded tier, and the replay of every Z3
counterexample). A new kind of check is one `Kind` in a module here and one line in `KINDS`.
"""

from __future__ import annotations

from dataclasses import replace

from ringproof.errors import BadInput
from ringproof.model.ring.trace import Trace
from ringproof.proofs.ring.properties import (coverage, joint, no_conflict, operands, placement, running_sums,
                                              well_formed)
from ringproof.proofs.ring.properties.base import Check, Finding, Kind, generic_step
from ringproof.proofs.results import SOLVER_PROPERTIES
from ringproof.schedules.dsl import Op, Schedule

KINDS: tuple[Kind, ...] = (well_formed.KINDS + coverage.KINDS + joint.KINDS + no_conflict.KINDS
                           + running_sums.KINDS + operands.KINDS + placement.KINDS)
PER_PHASE = tuple(p for p in SOLVER_PROPERTIES if p != "placement")   # placement: per output array


def unhandled(properties=SOLVER_PROPERTIES, kinds=KINDS) -> list[str]:
    """The properties decided by checks (`ringproof.proofs.results.PROPERTY_TABLE`) that no kind
    reports, and the properties kinds report that the table does not list: both must be empty."""
    reported = {p for k in kinds for p in k.properties}
    return sorted((set(properties) - reported) | (reported - set(properties)))


if unhandled():
    raise ImportError(f"the property table and the registry's kinds disagree on {unhandled()}")

__all__ = ["KINDS", "SOLVER_PROPERTIES", "Check", "Finding", "Kind", "derive", "check_trace", "unhandled"]


def derive(schedule: Schedule) -> list[Check]:
    """Every check of every property for every phase of `schedule`."""
    _validate(schedule)
    phase_kinds = [k for k in KINDS if not k.schedule_level]
    checks = [c for phase in schedule.phases for kind in phase_kinds for c in kind.symbolic(schedule, phase)]
    checks += [c for kind in KINDS if kind.schedule_level for c in kind.symbolic(schedule)]
    requires, chunk, _ = shape_of(schedule)
    return [replace(c, shape=schedule.shape, requires=requires, chunk=chunk) for c in checks]


def shape_of(schedule: Schedule):
    """(the side condition as a Term or None, the chunk c, the derived parameter that is the chunk
    or None): c > 1 where a derived parameter is div(k, c) or div(n, c·m) and the side condition is
    proved (Z3) to make c divide k, so that parameter is k/c exactly and the queries may split
    indices in chunks of h = k/c; else, where the steps write such a chunk size inline (no derived
    name: `div(P.k, 2)` under 2m | n), the same c with no name; else 1."""
    if schedule.requires is None:
        return None, 1, None
    from ringproof.schedules.dsl import with_derived
    from ringproof.proofs.ring.normalize import PARAMS
    from ringproof.schedules.expr import lift
    requires = lift(schedule.requires(PARAMS))
    P = with_derived(schedule.derived, PARAMS)
    for name in schedule.derived:
        c = _chunk(schedule, requires, lift(getattr(P, name)))
        if c is not None:
            return requires, c, name
    for t in _inline_divisions(schedule):
        c = _chunk(schedule, requires, t)
        if c is not None:
            return requires, c, None
    return requires, 1, None


def _chunk(schedule: Schedule, requires, t):
    """c where the Term t is div(k, c) or div(n, c·m) with c a block divisor the side condition
    `requires` is proved to make divide k; else None."""
    from ringproof.proofs.ring.lemmas import BLOCK_DIVISORS
    from ringproof.proofs.ring.normalize import Ctx, NormalizationError, same_term
    if t.op != "div":
        return None
    ctx = Ctx(shape=schedule.shape)
    try:
        ctx.assumptions.append(ctx.cond(requires))
        num, den = ctx.val(t.args[0]), ctx.val(t.args[1])
    except NormalizationError:
        return None
    if num.blocks or den.blocks:
        return None
    is_k = same_term(ctx.count_unit(num), ctx.k) and z3_int(den.q) == 0 and z3_int(den.r)
    is_n = same_term(ctx.extent_unit(num), ctx.k) and z3_int(den.r) == 0 and z3_int(den.q)
    c = z3_int(den.r) if is_k else z3_int(den.q) if is_n else None
    return c if c in BLOCK_DIVISORS and ctx.prove(ctx.k % c == 0) else None


def _inline_divisions(schedule: Schedule) -> list:
    """The div Terms of parameters alone (no index in them) in the phases' steps at symbolic
    indices, each once by its printed form: the candidates for a chunk size written inline."""
    from ringproof.schedules.expr import Term, render
    params = {"n", "m", "k", "d", "kd"}
    out, seen, todo = {}, set(), [generic_step(p) for p in schedule.phases]

    def names(t):
        return set().union(*(names(a) for a in t.args if isinstance(a, Term))) if t.op != "var" else {t.args[0]}

    while todo:
        x = todo.pop()
        if id(x) in seen or x is None or isinstance(x, (int, str, float, bool)):
            continue
        seen.add(id(x))
        if isinstance(x, Term):
            if x.op == "div" and names(x) <= params:
                out.setdefault(render(x), x)
            todo += [a for a in x.args if not isinstance(a, (int, str))]
        elif isinstance(x, dict):
            todo += list(x.values())
        elif isinstance(x, (tuple, list)):
            todo += list(x)
        elif hasattr(x, "__dict__"):
            todo += list(vars(x).values())
    return list(out.values())


def z3_int(e):
    """The integer value of a Z3 term that simplifies to a numeral, else None."""
    import z3
    e = z3.simplify(e)
    return e.as_long() if z3.is_int_value(e) else None


def check_trace(trace: Trace, properties=None, limit: int = 1) -> dict:
    """(property, phase) -> list of Findings (empty: holds for this n, m)."""
    wanted = set(properties or SOLVER_PROPERTIES)
    out: dict = {}
    for k, pt in enumerate(trace.phases):
        for prop in PER_PHASE:
            if prop in wanted:
                out.setdefault((prop, pt.phase.name), [])
        for kind in KINDS:
            if kind.schedule_level or (kind.prop is not None and kind.prop not in wanted):
                continue
            for f in kind.concrete(trace, k, pt, limit):
                if f.property in wanted:
                    out.setdefault((f.property, f.phase), []).append(f)
    if "placement" in wanted:
        for array in placement.outputs(trace.schedule):
            out.setdefault(("placement", array.name), [])
    for kind in KINDS:
        if kind.schedule_level and kind.prop in wanted:
            for f in kind.concrete(trace, limit):
                out.setdefault((f.property, f.phase), []).append(f)
    return out


def _at(phase) -> str:
    """`file:line: ` where the phase was written, for a message about it."""
    return f"{phase.defined_at}: " if phase.defined_at else ""


def _validate(schedule: Schedule) -> None:
    """Structural checks that need no solver: a malformed schedule is bad input, not a verdict."""
    for phase in schedule.phases:
        st = generic_step(phase)
        if len(st.sources) != len(st.operands):
            raise BadInput(f"{_at(phase)}phase {phase.name}: {len(st.operands)} operands but "
                           f"{len(st.sources)} source witnesses")
        if st.op.accumulates and (st.first is None or st.prev is None):
            missing = " and ".join(w for w in ("first", "prev") if getattr(st, w) is None)
            raise BadInput(f"{_at(phase)}phase {phase.name}: an accumulating step must give `first` and "
                           f"`prev` (missing: {missing}; docs/dsl.md)")
        if st.op is not Op.MOVE and st.target is None:
            raise BadInput(f"{_at(phase)}phase {phase.name}: a {st.op.value} step needs a target")
