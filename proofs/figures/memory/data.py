"""What one iteration does to the data on its PE, read off its step, and the hints that mark
where stays end (`Schedule.stays`): shared by the stay checks and counts (`stays`) and the ledger's
readings (`ledger`)."""

from __future__ import annotations

from dataclasses import dataclass

from ringproof.model.ring import vocabulary
from ringproof.schedules.expr import and_, lift, not_, or_


class NotDerived(Exception):
    """The exact peak is not derived; the message says why."""


@dataclass
class Datum:
    """One datum an iteration touches on its PE (its slots grouped by their text): `ref`, and the
    conditions (Terms) under which it is used, made, begins a sum, departs; `sources`: the
    witnesses of the slots that read it (operands, a forwarded copy) and, for a node, its `prev`."""

    ref: object
    used: object
    made: object
    first: object
    departs: object
    sources: list
    node_prev: object
    shared: bool = False


def data_of(step) -> list[Datum]:
    """The distinct data a step touches on its PE. A send moves the step's running sum where its
    datum is the target, the op accumulates and the send does not copy (a condition where `copy` is
    one: Algorithm 2's phase 1 moves its sum before j = n and copies it from there). Two operand
    slots of one array, neither the target nor sent, are two uses (`Datum.shared`): they may be one
    datum, which neither begins nor ends a stay there unless marked (`shared_marked`). Raises
    NotDerived where two slots of one array name data not written alike otherwise."""
    act = lift(step.guard)
    sending = lift(False) if step.send is None else lift(step.send.when)
    own = step.send is not None and step.op.accumulates and step.target is not None and \
        str(step.send.datum) == str(step.target)
    copy = True if not own else step.send.copy
    moves = lift(False) if copy is True else sending if copy is False else and_(sending, not_(lift(copy)))
    slots: dict = {}
    only_read = {str(o) for o in step.operands} - {str(r) for r in (step.target, step.send and step.send.datum)}

    def slot(ref):
        key = str(ref)
        if key not in slots:
            others = [d for d in slots.values() if d.ref.array == ref.array]
            if others and not (key in only_read and all(str(d.ref) in only_read for d in others)):
                raise NotDerived(f"two slots of {ref.array.name} in one step, one datum or two not decided: "
                                 f"{ref} and {others[0].ref}")
            slots[key] = Datum(ref, lift(False), lift(False), lift(False), lift(False), [], None)
            for d in others:
                d.shared = slots[key].shared = True
        return slots[key]

    for o, w in zip(step.operands, step.sources):
        d = slot(o)
        d.used = or_(d.used, act)
        d.sources.append((act, w))
    if step.target is not None:
        d = slot(step.target)
        if step.op.accumulates:
            first = lift(step.first) if step.first is not None else lift(False)
            d.used = or_(d.used, act)
            d.first = or_(d.first, and_(act, first))
            # a node continues its sum also where it only forwards it (ring-locality's `prev` check)
            node = vocabulary.node(act, moves)
            d.node_prev = (and_(node, not_(vocabulary.starts(act, first))), step.prev)
        else:
            d.made = or_(d.made, act)
            d.used = or_(d.used, act)
    if step.send is not None:
        d = slot(step.send.datum)
        d.used = or_(d.used, sending)
        if copy is not True:
            d.departs = or_(d.departs, moves)
        if step.send.source is not None and copy is not False:
            d.sources.append((sending if copy is True else and_(sending, lift(copy)), step.send.source))
    return list(slots.values())


def hint(schedule, kind: str, phase: str, array: str | None = None):
    """The schedule's hint function of `kind` for (phase, array) (for `phase` alone: "guard"), or None."""
    return getattr(schedule.stays, kind).get(phase if array is None else (phase, array))


def stored(step):
    """The datum a step's send leaves on the next PE (its `as_` name where renamed)."""
    return step.send.as_ if step.send.as_ is not None else step.send.datum


def mark(schedule, kind, phase, array, P, ix):
    fn = hint(schedule, kind, phase, array)
    return lift(False) if fn is None else lift(fn(P, ix))


def outputs(schedule) -> set:
    return {a.name for a in schedule.problem.outputs}


def ends(schedule, phase, d: Datum, P, ix):
    """(ends a stay during the run, kept to the end) conditions of datum d at iteration ix."""
    marked = and_(d.used, mark(schedule, "last", phase.name, d.ref.array.name, P, ix))
    if d.ref.array.name in outputs(schedule):
        return d.departs, and_(marked, not_(d.departs))
    return or_(d.departs, marked), lift(False)


# --------------------------------------------------------------------------- the checks (Z3)
