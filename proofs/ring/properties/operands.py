"""ring-locality and data-flow of operands: each datum a step reads (and each datum it forwards)
is where its source witness says — an input placed on this PE (`HOME`), or held by an earlier
iteration on this PE, or sent by one on the previous PE — and, when it is a running sum, final.
A witness in the same phase (or HOME) is ring-locality; one in an earlier phase is data-flow."""

from __future__ import annotations

import numpy as np

from ringproof.proofs.ring.iterations import (active, alternatives, at, before, exists, fresh, moves, next_pe,
                                              node, ref_eq, same_iteration, sending, starts)
from ringproof.proofs.ring.normalize import PARAMS
from ringproof.proofs.ring.properties.base import (Kind, computes, first_at, first_bad, generic_step, in_range, locate,
                                                  phases_computing, subset)
from ringproof.schedules.dsl import HOME, Op, rescaled
from ringproof.schedules.expr import and_, eq, lift, mod, not_, or_


def _prop(where: str | None, phase: str) -> str:
    return "ring-locality" if where is None or where == phase else "data-flow"


# ------------------------------------------------------------------------------- symbolic vocabulary


def _holds(src, datum):
    """Term: src has `datum` on its PE in its cycle: reads it, touches it as its sum, or forwards
    it with a checked send source."""
    st = src.step
    h = [and_(active(src), ref_eq(u, datum)) for u in st.operands]
    h.append(and_(node(src) if st.op.accumulates else active(src), ref_eq(st.target, datum)))
    if st.send is not None and st.send.source is not None:
        h.append(and_(sending(src), not_(moves(src)), ref_eq(st.send.datum, datum)))
    return or_(*h)


def _valid_source(S, a, w, o):
    """Term: witness w shows datum o on a's PE at the start of a's cycle."""
    if w is HOME:
        if not o.array.is_input:
            return lift(False), None
        return and_(in_range(o), eq(S.home(PARAMS, o), a.step.pe)), None
    src = at(S, w)
    ss = src.step
    held = and_(eq(ss.pe, a.step.pe), _holds(src, o), not_(and_(moves(src), ref_eq(ss.target, o))))
    sent = lift(False) if ss.send is None else and_(
        eq(next_pe(ss.pe), a.step.pe), sending(src), ref_eq(ss.send.stored, o),
        _holds(src, ss.send.datum))
    return and_(exists(src), before(src, a), or_(held, sent)), src


def _read_sites(st):
    """(label, ref, witness, needs) for each datum a step must find: operands, and a forwarded datum."""
    sites = [(f"operand {i + 1}", o, w, "operand") for i, (o, w) in enumerate(zip(st.operands, st.sources))]
    if st.send is not None and st.send.source is not None:
        sites.append(("sent datum", st.send.datum, st.send.source, "send"))
    return sites


def _site_hyp(a, kind: str):
    st = a.step
    if kind == "operand":
        return active(a)
    own = [ref_eq(u, st.send.datum) for u in st.operands] + [ref_eq(st.target, st.send.datum)]
    return and_(sending(a), not_(moves(a)), not_(and_(active(a), or_(*own))))


def _symbolic_sites(S, P):
    """(site number, label, alternative number, witness) of each read site of P's step."""
    for si, (label, ref0, w_all, _) in enumerate(_read_sites(generic_step(P))):
        for ai, (_, w) in enumerate(alternatives(w_all)):
            yield si, label, ref0, ai, w


def _site(S, ctx, P, si, ai):
    a = fresh(ctx, S, P, "a")
    _, o, w_all, kind = _read_sites(a.step)[si]
    cond, w = alternatives(w_all)[ai]
    return a, o, kind, cond, w


# ------------------------------------------------------------------------------- concrete vocabulary


def _holds_concrete(q, p, datum):
    """q's iterations p have `datum` on their PE: read it, touch it as their sum, or forward it."""
    act = q.active[p]
    h = (q.node[p] if q.op.accumulates else act) & (q.target[p] == datum)
    for o in q.operands:
        h |= act & (o[p] == datum)
    if q.send_source is not None:
        h |= q.send[p] & ~q.moves[p] & (q.sent[p] == datum)
    return h


def _inputs(trace) -> np.ndarray:
    """Per datum id: whether it is an element of an input array."""
    table = np.zeros(trace.layout.size, dtype=bool)
    for a in trace.schedule.problem.inputs:
        lo = trace.layout.offset[a.name]
        table[lo:lo + int(np.prod(trace.layout.extents[a.name]))] = True
    return table


def _needs_send_source(pt):
    own = pt.target == pt.sent
    for o in pt.operands:
        own |= o == pt.sent
    return pt.send & ~pt.moves & ~(pt.active & own)


def _concrete_sites(pt):
    """(label, datum ids, witness alternatives, mask of iterations that need the datum, the datum's
    array)."""
    st = pt.step
    sites = [(f"operand {i + 1}", o, w, pt.active, ref.array)
             for i, (o, w, ref) in enumerate(zip(pt.operands, pt.sources, st.operands))]
    if pt.send_source is not None:
        sites.append(("sent datum", pt.sent, pt.send_source, _needs_send_source(pt), st.send.datum.array))
    return sites


# ------------------------------------------------------------------------------- the datum is there


def source_symbolic(S, P):
    out = []
    for si, label, _, ai, w0 in _symbolic_sites(S, P):
        where = None if w0 is HOME else w0.phase

        def build(ctx, si=si, ai=ai):
            a, o, kind, cond, w = _site(S, ctx, P, si, ai)
            goal, src = _valid_source(S, a, w, o)
            its = {"a": a} if src is None else {"a": a, "src": src}
            return its, [_site_hyp(a, kind), cond], goal

        out.append(SOURCE.check(P.name, build, prop=_prop(where, P.name), label=label, where=where or "home"))
    return out


def source_concrete(trace, k, pt, limit):
    out, name = [], pt.phase.name
    for label, o, w, need, _ in _concrete_sites(pt):
        for mask, ph, idx in w.alternatives:
            kw = dict(prop=_prop(ph, name), label=label, where=ph or "home")
            at = np.nonzero(need & mask)[0]        # the iterations this alternative must serve
            oa, pe, cycle = (subset(x, at) for x in (o, pt.pe, pt.cycle))
            if ph is None:
                ok = (trace.home[np.maximum(oa, 0)] == pe) & (oa >= 0) & _inputs(trace)[np.maximum(oa, 0)]
                out += [SOURCE.finding(name, "the datum is not an input placed on this PE", [it], **kw)
                        for it in first_at(trace, k, at[~ok], limit)]
                continue
            q, pos = locate(trace, ph, {n_: subset(v, at) for n_, v in idx.items()}, at.size)
            if q.size == 0:
                out += [SOURCE.finding(name, f"phase {ph} has no iterations at this size", [it], **kw)
                        for it in first_at(trace, k, at, limit)]
                continue
            p = np.where(pos >= 0, pos, 0)
            earlier = (pos >= 0) & (q.cycle[p] < cycle)
            ok = earlier & (q.pe[p] == pe) & _holds_concrete(q, p, oa) & ~(q.moves[p] & (q.target[p] == oa))
            r = np.nonzero(earlier & ~ok)[0]        # not held there: sent from the previous PE?
            pr = p[r]
            ok[r] = (mod(q.pe[pr], trace.m) + 1 == pe[r]) & q.send[pr] & (q.stored[pr] == oa[r]) & \
                _holds_concrete(q, pr, q.sent[pr])
            out += [SOURCE.finding(name, "the datum is not where the witness says", [it], **kw)
                    for it in first_at(trace, k, at[~ok], limit)]
    return out


# ------------------------------------------------------------------------------- a sum read is final


def _reads_running(problem, st, label) -> bool:
    """Operand 2 of a term of a rescaled accumulator is its reference, which may be read while it
    still grows (online softmax: the term rescales the accumulator to the value it reads, and the
    online-softmax lemma, cited by the phase's coverage, makes the result the equation's)."""
    return (label == "operand 2" and st.target is not None and st.op is Op.EAC
            and rescaled(problem, st.target.array))


def final_symbolic(S, P):
    out = []
    for si, label, ref0, ai, w0 in _symbolic_sites(S, P):
        if w0 is HOME or _reads_running(S.problem, generic_step(P), label):
            continue
        src_st = generic_step(S.phase(w0.phase))
        if not (src_st.op.accumulates and src_st.target.array == ref0.array):
            continue
        for Q in phases_computing(S, src_st.target.array):
            def build(ctx, si=si, ai=ai, Q=Q):
                a, o, kind, cond, w = _site(S, ctx, P, si, ai)
                src = at(S, w)
                c = fresh(ctx, S, Q, "c")
                hyp = [_site_hyp(a, kind), cond, ref_eq(src.step.target, o), node(c),
                       not_(starts(c)), same_iteration(at(S, c.step.prev), src)]
                return {"a": a, "src": src, "c": c}, hyp, lift(False)

            out.append(FINAL.check(P.name, build, prop=_prop(w0.phase, P.name), label=label, other=Q.name))
    return out


def final_concrete(trace, k, pt, limit):
    out, name = [], pt.phase.name
    for label, o, w, need, array in _concrete_sites(pt):
        if _reads_running(trace.schedule.problem, pt.step, label):
            continue
        for mask, ph, idx in w.alternatives:
            if ph is None:
                continue
            src = trace.phase(ph).step
            if not src.op.accumulates:
                continue
            at = np.nonzero(need & mask)[0]
            oa = subset(o, at)
            if src.target.array != array and not (oa < 0).any():
                continue            # ids of two arrays never meet (only the out-of-range id -1 could)
            q, pos = locate(trace, ph, {n_: subset(v, at) for n_, v in idx.items()}, at.size)
            if q.size == 0:
                continue
            p = np.where(pos >= 0, pos, 0)
            fin = (pos >= 0) & (q.target[p] == oa)     # reads the sum the witness adds to
            if not fin.any():
                continue
            for qt in trace.phases:
                if not computes(qt, q.step.target.array):
                    continue
                (_, phq, idq), = qt.prev.alternatives
                if phq != ph:
                    continue
                _, pq = locate(trace, phq, idq, qt.size)
                succ = np.zeros(q.size, dtype=bool)
                s = qt.node & ~qt.starts & (pq >= 0)
                succ[pq[s]] = True
                out += [FINAL.finding(name, "the datum is read before its sum is complete", [it],
                                      prop=_prop(ph, name), label=label, other=qt.phase.name)
                        for it in first_at(trace, k, at[fin & succ[p]], limit)]
    return out


# ------------------------------------------------------------------------------- forwarding


def forwarded_symbolic(S, P):
    st = generic_step(P)
    if st.send is None or st.send.source is not None:
        return []

    def build(ctx):
        a = fresh(ctx, S, P, "a")
        return {"a": a}, [_site_hyp(a, "send")], lift(False)

    return [FORWARDED.check(P.name, build)]


def forwarded_concrete(trace, k, pt, limit):
    if pt.send_source is not None:
        return []
    return [FORWARDED.finding(pt.phase.name, "a datum is forwarded with no source witness", [it])
            for it in first_bad(trace, k, _needs_send_source(pt), limit)]


SOURCE = Kind("operands.source", None, "{label} from {where}", source_symbolic, source_concrete)
FINAL = Kind("operands.final", None, "{label} is final (no later term in {other})", final_symbolic, final_concrete)
FORWARDED = Kind("operands.forwarded", "ring-locality", "sends only what it holds", forwarded_symbolic,
                 forwarded_concrete)
KINDS = (SOURCE, FINAL, FORWARDED)
