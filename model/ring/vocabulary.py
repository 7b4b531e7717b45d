"""The trace vocabulary, defined once for every backend: numpy arrays (one element per iteration)
in the ring machine and the bounded tier, the prover's Terms in the symbolic checks. Callers pass
the step's fields evaluated on their backend; a step that cannot do a thing (no send, a sum it does
not accumulate) is decided by the caller before these are asked.

    active   the iteration's op happens (its guard)
    sending  it sends a datum (its send's `when`)
"""

from __future__ import annotations

from ringproof.schedules.expr import and_, not_, or_


def busy(active, sending):
    """The PE works in this iteration: an op, or only forwarding a datum."""
    return or_(active, sending)


def moves(sending, copy, sends_own_sum):
    """The send moves the step's own running sum (not a copy of it)."""
    return and_(sending, not_(copy), sends_own_sum)


def node(active, moves):
    """The iteration touches its running sum: adds a term, or forwards the partial sum."""
    return or_(active, moves)


def starts(active, first):
    """The iteration starts its sum from 0."""
    return and_(active, first)


def forwards(active, sending):
    """A MOVE cycle: the PE only forwards a datum (it sends, and its op does not happen)."""
    return and_(sending, not_(active))
