"""placement: each output element ends on the PE the schedule declares (`Schedule(placement=...)`).

Where a datum ends is where its last node leaves it: the PE of the last iteration that touches it
(adds a term, forwards the partial sum, or computes it), or the next PE when that iteration sends
the running sum on. Two ways to prove it for every n:
- without a witness, every node no later node of its datum follows must leave the datum on its
  placement PE. "No node follows" is a ∀ over iterations, which the query states by instances:
  the iterations whose `prev` names the node, found by inverting each phase's `prev` formulas
  (`_successors`), are not later nodes of its datum. A sum that stays where it is computed (y in
  Algorithms 1-3) needs none; one that travels and comes home with its last `Move` (a backward's
  gradient) proves so without a witness. Instances only exclude nodes, so a node they miss is a
  counterexample z3 may give that the enumerated trace, where the last node is known, does not
  confirm: `unknown`, never a refutation;
- with `ends=lambda P, ref: At(phase, ...)` (a witness, checked): that iteration is a node of the
  datum, no node of it follows (no iteration's `prev` is the witness), and it leaves the datum on
  its placement PE, where the moves do not determine the end (or to name it).
The concrete twin enumerates each datum's last node and compares where it ends with `placement`.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np

from ringproof.errors import BadInput
from ringproof.proofs.ring.iterations import (It, active, alternatives, at, before, exists, fresh, moves, new_var,
                                              next_pe, node, ref_eq, same_iteration, starts)
from ringproof.proofs.ring.normalize import PARAMS, NormalizationError
from ringproof.proofs.ring.properties.base import Kind, computes, describe, extent, generic_step, phases_computing
from ringproof.schedules.dsl import HOME, At
from ringproof.schedules.expr import Term, and_, eq, ite, lift, mod, not_, same, var


def outputs(S) -> list:
    """The arrays whose placement is declared: the problem's outputs."""
    return list(S.problem.outputs) if S.placement is not None else []


def _touches(it: It):
    return node(it) if it.step.op.accumulates else active(it)


def _after(it: It):
    """The PE that holds the datum after the iteration: its own, or the next if it moves it on."""
    return ite(moves(it), next_pe(it.step.pe), it.step.pe)


# ------------------------------------------------------------------------------- symbolic


def _key(ctx, S, array):
    """Fresh indices of an element of `array` that has a term (the equation's mask, if any)."""
    eqn = S.problem.equation_for(array)
    dims = list(array.dims) + ([eqn.reduce] if eqn.where is not None and eqn.reduce else [])
    names = [f"key.{i}" for i in range(len(dims))]
    for name, d in zip(names, dims):
        new_var(ctx, name, 1, extent(d))
    key = [var(nm) for nm in names]
    hyp = [lift(eqn.where(PARAMS, *key))] if eqn.where is not None else []
    return array[tuple(key[:len(array.dims)])], key, hyp


def _witness(S, ref) -> It:
    w = S.ends(PARAMS, ref)
    if not isinstance(w, At):
        raise BadInput(f"schedule {S.name}: `ends` must give one At(phase, ...) per output element")
    return at(S, w)


def _declared_end(ctx, S, array):
    """An element `ref` of `array` (fresh indices, `key`), the iteration `ends` names as its end, the
    hypotheses on the key, and what makes that iteration the element's end: it exists, touches the
    array and computes `ref`."""
    ref, key, hyp = _key(ctx, S, array)
    e = _witness(S, ref)
    return ref, {"key": key, "end": e}, hyp, [exists(e), _touches(e), ref_eq(e.step.target, ref)]


def ends_symbolic(S):
    out = []
    for array in outputs(S):
        if S.ends is None:
            for Q in phases_computing(S, array):
                def build(ctx, Q=Q, array=array):
                    a = fresh(ctx, S, Q, "a")
                    return ({"a": a}, [_touches(a)] + _not_followed(ctx, S, array, a),
                            eq(_after(a), S.placement(PARAMS, a.step.target)))

                out.append(ENDS.check(array.name, build, array=array.name))
            continue

        def build(ctx, array=array):
            ref, names, hyp, is_end = _declared_end(ctx, S, array)
            return names, hyp + is_end, eq(_after(names["end"]), S.placement(PARAMS, ref))

        out.append(ENDS.check(array.name, build, array=array.name))
    return out


def witness_symbolic(S):
    out = []
    for array in outputs(S):
        if S.ends is None:
            continue

        def build(ctx, array=array):
            _, names, hyp, is_end = _declared_end(ctx, S, array)
            return names, hyp, and_(*is_end)

        out.append(WITNESS.check(array.name, build, array=array.name))
    return out


def last_symbolic(S):
    out = []
    for array in outputs(S):
        if S.ends is None:
            continue
        for R in phases_computing(S, array):
            if not R.step(PARAMS, _generic(R)).op.accumulates:
                continue
            for ai in range(len(alternatives(R.step(PARAMS, _generic(R)).prev))):
                def build(ctx, array=array, R=R, ai=ai):
                    ref, names, hyp, _ = _declared_end(ctx, S, array)
                    c = fresh(ctx, S, R, "c")
                    cond, w = alternatives(c.step.prev)[ai]
                    hyp += [node(c), not_(starts(c)), cond, ref_eq(c.step.target, ref),
                            same_iteration(at(S, w), names["end"])]
                    return {**names, "c": c}, hyp, lift(False)

                out.append(LAST.check(array.name, build, array=array.name, other=R.name))
    return out


# ------------------------------------------------------------------ the last node, without a witness


def _travels(phase) -> bool:
    """Can the phase's step move its own running sum on (a `Move` of an element of its target)?"""
    st = generic_step(phase)
    return (st.op.accumulates and st.send is not None and st.target is not None
            and st.send.datum.array == st.target.array and st.send.copy is not True)


def _later(c: It, a: It):
    """Term: c is a node of a's datum in a later cycle, so a is not the datum's last node (as the
    concrete twin reads it: the last by cycle of the nodes touching the datum)."""
    return and_(exists(c), _touches(c), ref_eq(c.step.target, a.step.target), before(a, c))


def _not_followed(ctx, S, array, a: It) -> list:
    """Hypotheses that the node a of a sum that travels is its datum's last node: for each
    iteration c whose `prev` names a (each phase's `prev` inverted at a), ¬`_later(c, a)`.

    Each is an instance of "no node of a's datum follows a", true of the last node whatever the
    inversion gives (c is any term), so the query stays sound with any of them; a node whose
    successor the inversion misses still fails the check, as it did with none. An instance the
    normalization cannot take is left out. A sum that never moves gets none (its query stays as
    it is: where ring-locality holds, its nodes share one PE)."""
    computing = [R for R in phases_computing(S, array) if generic_step(R).op.accumulates]
    if not any(_travels(R) for R in computing):
        return []
    out, seen = [], []
    for R in computing:
        k = S.phases.index(R)
        try:
            found = _successors(R, a)
        except NormalizationError:        # a `prev` that is not a witness (its running-sum checks say so)
            continue
        for idx in found:
            if any(all(same(idx[n], other[n]) for n in R.index_names) for other in seen):
                continue
            seen.append(idx)
            h = not_(_later(It(R, k, idx, slot=S.slots[k]), a))
            try:
                ctx.cond(h)
            except NormalizationError:
                continue
            out.append(h)
    return out


MAX_SPLITS = 3     # the conditions of a `prev` chosen either way when it is inverted (8 branches)
MAX_FREE = 2       # the indices a branch may leave free, each then tried at both ends of its loop


def _successors(R, a: It) -> list[dict]:
    """Index dicts (Terms in a's variables) of the iterations of R whose `prev` may be a: each
    alternative of R's `prev` naming a's phase, its index formulas split by their `ite`
    conditions, each branch solved for R's indices (`_solved`) from its formulas and the equalities
    its chosen conditions state. An index a branch leaves free (`i` where `1 < i` is false) is
    tried at each end of its loop."""
    hole = {name: f"?{name}" for name in R.index_names}
    ix = SimpleNamespace(**{name: var(v) for name, v in hole.items()})
    st = R.step(PARAMS, ix)
    if st.prev is None:
        return []
    ends = {hole["l"]: (lift(1), lift(PARAMS.m))}
    for lp in R.loops:
        lo, hi = (lift(b) for b in lp.bounds(PARAMS, ix))
        if not (_names(lo) | _names(hi)) & set(hole.values()):
            ends[hole[lp.name]] = (lo, hi)
    lows = {u: lo for u, (lo, _) in ends.items()}
    out = []
    for _, w in alternatives(st.prev):
        if w is HOME or w.phase != a.phase.name or set(w.idx) != set(a.phase.index_names):
            continue
        sides = [(lift(w.idx[name]), a.idx[name]) for name in a.phase.index_names]
        conds: list = []
        for t, _ in sides:
            _conditions(t, conds)
        for choice in itertools.product((True, False), repeat=min(len(conds), MAX_SPLITS)):
            chosen = list(zip(conds, choice))
            exact = [(_choose(t, chosen), x) for t, x in sides] + [e for c, v in chosen for e in _equations(c, v)]
            found = _solved(exact, set(hole.values()), lows)
            free = sorted(set(hole.values()) - set(found))
            if len(free) > MAX_FREE or not set(free) <= set(ends):
                continue
            for pick in itertools.product(*[ends[u] for u in free]):
                whole = _solved(exact + [(var(u), x) for u, x in zip(free, pick)], set(hole.values()), lows)
                if set(whole) == set(hole.values()):
                    out.append({name: whole[v] for name, v in hole.items()})
    return out


def _equations(c, holds: bool) -> list:
    """The equalities (t, x), t = x, that the condition c being `holds` states."""
    if c.op == "not":
        return _equations(c.args[0], not holds)
    if (c.op == "and" and holds) or (c.op == "or" and not holds):
        return [e for x in c.args for e in _equations(x, holds)]
    if c.op == "eq" and holds:
        y, z = c.args
        return [(y, z), (z, y)]
    return []


def _solved(equations: list, unknowns: set, lows: dict) -> dict:
    """{unknown: Term} of the unknowns the equations t = x (x known) solve, each equation used once
    its other unknowns are solved."""
    found: dict = {}
    todo = list(equations)
    while todo:
        left = []
        for t, x in todo:
            t = _substitute(t, found)
            names = _names(t) & unknowns
            if len(names) == 1:
                hit = _solve(t, x, names, lows)
                if hit is not None:
                    found[hit[0]] = hit[1]
                    continue
            if names:
                left.append((t, x))
        if len(left) == len(todo):
            break
        todo = left
    return found


def _solve(t, x, unknowns: set, lows: dict):
    """(u, value) with t = x where the one unknown u of t is value, t being u plus or minus known
    terms, negated, or taken mod a known divisor (u then the value of its residue class from its
    loop's low bound, if known); None where t is not so."""
    if t.op == "var":
        return (t.args[0], x) if t.args[0] in unknowns else None
    if t.op == "neg":
        return _solve(t.args[0], -x, unknowns, lows)
    if t.op == "add":
        y, z = t.args
        if _names(y) & unknowns:
            return None if _names(z) & unknowns else _solve(y, x - z, unknowns, lows)
        return _solve(z, x - y, unknowns, lows)
    if t.op == "mod" and not _names(t.args[1]) & unknowns:
        hit = _solve(t.args[0], x, unknowns, lows)
        if hit is None:
            return None
        lo = lows.get(hit[0])
        return hit if lo is None else (hit[0], lo + mod(hit[1] - lo, t.args[1]))
    return None


def _names(t) -> set:
    """The variable names of Term t."""
    out, todo = set(), [t]
    while todo:
        x = todo.pop()
        if isinstance(x, Term):
            if x.op == "var":
                out.add(x.args[0])
            else:
                todo.extend(x.args)
    return out


def _substitute(t, values: dict):
    """Term t with the variables named in `values` replaced by their Terms."""
    if not isinstance(t, Term) or not values:
        return t
    if t.op == "var":
        return values.get(t.args[0], t)
    if t.op in ("const", "bool"):
        return t
    return Term(t.op, tuple(_substitute(x, values) for x in t.args))


def _conditions(t, out: list) -> None:
    """The conditions of the `ite`s that choose among t's values (not those inside conditions),
    each once, into `out`."""
    if not isinstance(t, Term) or t.op in ("var", "const", "bool"):
        return
    if t.op == "ite":
        if not any(same(t.args[0], c) for c in out):
            out.append(t.args[0])
        _conditions(t.args[1], out)
        _conditions(t.args[2], out)
        return
    for x in t.args:
        _conditions(x, out)


def _choose(t, chosen: list):
    """Term t with each `ite` whose condition is in `chosen` [(condition, truth)] replaced by the
    branch its truth selects."""
    if not isinstance(t, Term) or t.op in ("var", "const", "bool"):
        return t
    if t.op == "ite":
        hit = next((v for c, v in chosen if same(t.args[0], c)), None)
        if hit is not None:
            return _choose(t.args[1] if hit else t.args[2], chosen)
    return Term(t.op, tuple(_choose(x, chosen) for x in t.args))


def _generic(phase):
    from types import SimpleNamespace
    return SimpleNamespace(**{name: var(name) for name in phase.index_names})


# ------------------------------------------------------------------------------- concrete


def _last_nodes(trace, array):
    """{datum id: (phase index, position)} of the last node of each element of `array`."""
    ids, cycles, where = [], [], []
    for k, pt in enumerate(trace.phases):
        if not computes(pt, array):
            continue
        touch = pt.node if pt.op.accumulates else pt.active
        pos = np.nonzero(touch & (pt.target >= 0))[0]
        ids.append(pt.target[pos])
        cycles.append(pt.cycle[pos])
        where.append(np.stack([np.full(pos.size, k), pos], axis=1))
    if not ids:
        return {}
    ids, cycles, where = np.concatenate(ids), np.concatenate(cycles), np.concatenate(where)
    order = np.lexsort((cycles, ids))
    last = np.ones(order.size, dtype=bool)
    last[:-1] = ids[order][1:] != ids[order][:-1]
    return {int(ids[i]): (int(where[i][0]), int(where[i][1])) for i in order[last]}


def _element(trace, array, datum: int):
    ext = trace.layout.extents[array.name]
    idx = np.unravel_index(datum - trace.layout.offset[array.name], ext)
    return array[tuple(int(i) + 1 for i in idx)]


def _leaves(trace, k, pos) -> int:
    pt = trace.phases[k]
    pe = int(pt.pe[pos])
    return pe % trace.m + 1 if bool(pt.moves[pos]) else pe


def _declared(trace, array, data: list) -> np.ndarray:
    """The PE `placement` declares for each datum id of `array` in `data`, in one call on index
    arrays (as the trace reads `home`: one Python call per element was half a bounded sweep)."""
    ext = trace.layout.extents[array.name]
    idx = np.unravel_index(np.asarray(data, dtype=np.int64) - trace.layout.offset[array.name], ext)
    ref = array[tuple(i + 1 for i in idx)]
    return np.broadcast_to(np.asarray(trace.schedule.placement(trace.P, ref), dtype=np.int64), (len(data),))


def ends_concrete(trace, limit):
    S, out = trace.schedule, []
    for array in outputs(S):
        lasts = sorted(_last_nodes(trace, array).items())
        if not lasts:
            continue
        declared = _declared(trace, array, [datum for datum, _ in lasts])
        for (datum, (k, pos)), want in zip(lasts, declared):
            got = _leaves(trace, k, pos)
            if got != int(want):
                out.append(ENDS.finding(array.name, f"{trace.layout.name(datum)} ends on PE {got}, not on PE {want}",
                                        [describe(trace, k, pos)], array=array.name))
                if len(out) >= limit:
                    return out
    return out


def _witnessed(trace):
    """(array, datum, last node (k, pos) or None if no node touches the datum, witness (k, pos) or
    None if it does not touch the datum) for each output element, where an end witness is declared
    (every element, as the symbolic check quantifies: one no node touches has no witness either)."""
    S = trace.schedule
    for array in outputs(S):
        if S.ends is None:
            continue
        lasts = _last_nodes(trace, array)
        first = trace.layout.offset[array.name]
        for datum in range(first, first + int(np.prod(trace.layout.extents[array.name]))):
            if datum not in lasts:
                yield array, datum, None, None
                continue
            k, pos = lasts[datum]
            w = S.ends(trace.P, _element(trace, array, datum))
            names = [p.phase.name for p in trace.phases]
            here = names.index(w.phase) if isinstance(w, At) and w.phase in names else None
            q = trace.phases[here] if here is not None else None
            found = -1 if q is None or q.size == 0 else int(q.locate(
                {n_: np.asarray([w.idx[n_]], dtype=np.int32) for n_ in q.phase.index_names})[0])
            touch = found >= 0 and bool((q.node if q.op.accumulates else q.active)[found]) \
                and int(q.target[found]) == datum
            yield array, datum, (k, pos), ((here, found) if touch else None)


def witness_concrete(trace, limit):
    return [WITNESS.finding(array.name, f"the end witness of {trace.layout.name(datum)} does not touch it"
                            + ("" if last else " (no node touches it)"),
                            [describe(trace, *last)] if last else [], array=array.name)
            for array, datum, last, w in _witnessed(trace) if w is None][:limit]


def last_concrete(trace, limit):
    return [LAST.finding(array.name, f"{trace.layout.name(datum)} has a node after its end witness",
                         [describe(trace, *w), describe(trace, *last)], array=array.name,
                         other=trace.phases[last[0]].phase.name)
            for array, datum, last, w in _witnessed(trace) if w is not None and w != last][:limit]


ENDS = Kind("placement.ends", "placement", "{array} ends on its placement PE", ends_symbolic, ends_concrete,
            schedule_level=True)
WITNESS = Kind("placement.witness", "placement", "the end witness of {array} touches it", witness_symbolic,
               witness_concrete, schedule_level=True)
LAST = Kind("placement.last", "placement", "no node of {array} in {other} after its end witness", last_symbolic,
            last_concrete, schedule_level=True)
KINDS = (ENDS, WITNESS, LAST)
