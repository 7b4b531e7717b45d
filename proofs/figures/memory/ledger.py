"""A phase's stay events read over a padded nest (`Schedule.stays["ledger"]`), for the occupancy.

Where a loop's bound reads an outer index under mod or cases (Algorithm 2's phase 1: j runs to
n + extra(h)), the occupancy's counts cannot sum the phase's events over its nest. The hint
(`{phase: {"loop", "pad", "begin", "end", "transit", "arrive", "to", "back"}}`, each a function of
(P, ix)) reads them over the nest with that loop's bound padded to `pad` (affine), each reading
checked by Z3 for every n (`checks`; u ranges over the padded nest, "real" is u within the phase's
own bounds):

- *pad*: every iteration's index lies within `pad`;
- *begin*: begin(u) ⇔ u real and some datum begins a stay at u (made, or a first node), never two;
- *transit*: at a real u with transit(u) the PE only passes on a copy that arrived from u's
  predecessor (the loop's index − 1, PE l − 1), which sent it: u's send is that datum's end
  (its marked last use) and u begins nothing. Such a stay lasts the one cycle of u;
- *end*: end(u) ⇔ u real, not transit, and some datum's stay ends at u (a departure, a marked
  last use), never two, and no output is kept at u;
- *arrive*: `to` maps every real send whose successor is not transit to a point of the padded nest
  with arrive there, on the same PE, and `back` maps it back; every padded point with arrive is
  `to` of such a send; and a real iteration t follows the send iff it follows its point (a
  re-timing no real iteration notices: Algorithm 2's mirror, stored by the last hop of its block,
  counted at the block's padded end).

So at every real iteration t the counts of the readings before t are the counts of the phase's
events before t, less the transit pairs (an arrival from the predecessor and its end): each of
those adds one at its own iteration and nothing after, the term [transit(t)] of the occupancy.
The padded loop must be the phase's innermost (the predecessor is then the cycle before), the
phase alone in its slot, and no peak candidate in it (a padded point may be no cycle)."""

from __future__ import annotations

from types import SimpleNamespace

from ringproof.proofs.figures.memory.data import data_of, ends, NotDerived, stored
from ringproof.proofs.ring.iterations import before, exists, fresh, It, new_var, next_pe, ref_eq, sending
from ringproof.proofs.ring.normalize import PARAMS
from ringproof.proofs.ring.properties import shape_of
from ringproof.proofs.ring.properties.base import Check
from ringproof.schedules.expr import and_, between, eq, le, lift, not_, or_, var, wrap


def hint(schedule, phase):
    """The phase's ledger hint, or None. NotDerived where its loop is not the phase's innermost
    (a transit's predecessor, index − 1, is then not the cycle before) or where the slot holds
    another phase."""
    got = schedule.stays.ledger.get(phase.name)
    if got is not None:
        if phase.loops[-1].name != got["loop"]:
            raise NotDerived(f"phase {phase.name}: its ledger pads loop {got['loop']}, not its innermost")
        k = schedule.phases.index(phase)
        if schedule.slots.count(schedule.slots[k]) > 1:
            raise NotDerived(f"phase {phase.name}: a ledger in a slot of several phases")
    return got


def checks(schedule) -> list:
    """The Checks of every ledger hint (module doc)."""
    S, out = schedule, []
    requires, chunk, _ = shape_of(S)
    P = PARAMS
    for p in S.phases:
        h = hint(S, p)
        if h is None:
            continue
        k = S.phases.index(p)
        loop = h["loop"]

        def point(ctx, prefix, p=p, h=h, k=k, loop=loop):
            idx = {}
            for lp in p.loops:
                lo, hi = lp.bounds(P, SimpleNamespace(**idx))
                if lp.name == loop:
                    hi = h["pad"](P, SimpleNamespace(**idx))
                new_var(ctx, f"{prefix}.{lp.name}", lo, hi)
                idx[lp.name] = var(f"{prefix}.{lp.name}")
            new_var(ctx, f"{prefix}.l", 1, P.m)
            idx["l"] = var(f"{prefix}.l")
            return It(p, k, idx, prefix, slot=S.slots[k])

        def moved(it, d, p=p, k=k, loop=loop):
            """The iteration d steps along the ledger's loop from `it`, on the PE d steps on."""
            idx = dict(it.idx, **{loop: it.idx[loop] + d, "l": wrap(it.idx["l"] + d, P.m)})
            return It(p, k, idx, slot=S.slots[k])

        def named(idx, p=p, k=k):
            return It(p, k, {n: lift(v) for n, v in idx.items()}, slot=S.slots[k])

        def read(fn, it):
            return lift(fn(P, SimpleNamespace(**it.idx)))

        def events(it, p=p):
            ds = data_of(it.step)
            begins = [or_(d.made, d.first) for d in ds]
            during, kept = zip(*[ends(S, p, d, P, SimpleNamespace(**it.idx)) for d in ds]) if ds else ((), ())
            return ds, begins, list(during), list(kept)

        def one(conds):
            return and_(*[not_(and_(a, b)) for i, a in enumerate(conds) for b in conds[i + 1:]])

        def transit(it, h=h, p=p):
            return and_(exists(it), read(h["transit"], it))

        def c_pad(ctx, p=p, h=h, loop=loop):
            a = fresh(ctx, S, p, "a")
            return {"a": a}, [], le(a.idx[loop], read(h["pad"], a))

        def c_begin(ctx, h=h, p=p):
            u = point(ctx, "u")
            _, begins, _, _ = events(u)
            real = and_(exists(u), or_(*begins))
            b = read(h["begin"], u)
            return {"u": u}, [], and_(or_(not_(b), real), or_(b, not_(real)), or_(not_(exists(u)), one(begins)))

        def c_end(ctx, h=h, p=p):
            u = point(ctx, "u")
            _, _, during, kept = events(u)
            real = and_(exists(u), not_(read(h["transit"], u)), or_(*during))
            e = read(h["end"], u)
            return {"u": u}, [], and_(or_(not_(e), real), or_(e, not_(real)),
                                      or_(not_(exists(u)), and_(one(during), *[not_(x) for x in kept])))

        def c_transit(ctx, p=p):
            u = point(ctx, "u")
            a = moved(u, -1)
            ds, begins, during, _ = events(u)
            sent = u.step.send.datum if u.step.send is not None else None
            ends_it = or_(*[and_(ref_eq(d.ref, sent), x) for d, x in zip(ds, during)])
            goal = and_(exists(a), sending(a), eq(next_pe(a.idx["l"]), u.idx["l"]), sending(u),
                        ref_eq(stored(a.step), sent) if a.step.send is not None else lift(False),
                        ends_it, *[not_(b) for b in begins])
            return {"u": u}, [transit(u)], goal

        def c_to(ctx, h=h, p=p):
            a, t = fresh(ctx, S, p, "a"), fresh(ctx, S, p, "t")
            v = named(h["to"](P, SimpleNamespace(**a.idx)))
            back = h["back"](P, SimpleNamespace(**v.idx))
            order = and_(or_(not_(before(a, t)), before(v, t)), or_(before(a, t), not_(before(v, t))))
            goal = and_(_in_padded(S, p, P, v), read(h["arrive"], v), eq(v.idx["l"], a.idx["l"]),
                        *[eq(lift(back[n]), a.idx[n]) for n in a.idx], order)
            return {"a": a, "t": t}, [sending(a), not_(transit(moved(a, 1)))], goal

        def c_back(ctx, h=h, p=p):
            u = point(ctx, "u")
            a = named(h["back"](P, SimpleNamespace(**u.idx)))
            again = h["to"](P, SimpleNamespace(**a.idx))
            return {"u": u}, [read(h["arrive"], u)], and_(exists(a), sending(a), not_(transit(moved(a, 1))),
                                                           *[eq(lift(again[n]), u.idx[n]) for n in u.idx])

        for name, build in (("pad", c_pad), ("begin", c_begin), ("end", c_end), ("transit", c_transit),
                            ("arrive to", c_to), ("arrive back", c_back)):
            out.append(Check("memory", p.name, f"ledger {name}", build, shape=S.shape, requires=requires, chunk=chunk))
    return out


def _in_padded(S, p, P, it):
    """Term: the iteration's indices lie in the padded nest's ranges and l ∈ [1, m]."""
    h, conds, ns = hint(S, p), [], {}
    for lp in p.loops:
        lo, hi = lp.bounds(P, SimpleNamespace(**ns))
        if lp.name == h["loop"]:
            hi = h["pad"](P, SimpleNamespace(**ns))
        conds.append(between(lo, it.idx[lp.name], hi))
        ns[lp.name] = it.idx[lp.name]
    conds.append(between(1, it.idx["l"], P.m))
    return and_(*conds)
