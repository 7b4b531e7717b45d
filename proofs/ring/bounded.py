"""The bounded tier: every check of `ringproof.proofs.ring.obligations`, decided by enumerating one (n, m).

Same definitions, same witnesses, evaluated on the numpy trace of `ringproof.model.ring.trace` instead of in Z3:
this is the exhaustive cross-check of every parametric verdict, and the replay of every Z3
counterexample.
"""

from __future__ import annotations

import os

import numpy as np

from ringproof.proofs.workers import can_fork, pool_map, worker_pool
from ringproof.model.ring.trace import PhaseTrace, Trace, build_trace
from ringproof.model.ring.machine import describe
from ringproof.schedules.dsl import Op, Schedule


class Finding:
    """A violation found by enumeration: which check, a message, the iterations involved."""

    def __init__(self, prop, phase, check, message, iterations=()):
        self.property, self.phase, self.check, self.message = prop, phase, check, message
        self.iterations = tuple(iterations)

    def __repr__(self):
        return f"{self.property}/{self.phase}: {self.check}: {self.message}"


def check_trace(trace: Trace, properties=None, limit: int = 1) -> dict:
    """(property, phase) -> list of Findings (empty: holds for this n, m)."""
    out: dict = {}
    S = trace.schedule
    for k, pt in enumerate(trace.phases):
        for prop, fn in (("well-formed", _well_formed), ("coverage", _coverage),
                         ("no-conflict", _no_conflict), ("ring-locality", None), ("data-flow", None)):
            if properties and prop not in properties:
                continue
            out.setdefault((prop, pt.phase.name), [])
        if not properties or "well-formed" in properties:
            out[("well-formed", pt.phase.name)] += _well_formed(trace, k, pt, limit)
        if not properties or "coverage" in properties:
            out[("coverage", pt.phase.name)] += _coverage(trace, k, pt, limit)
        if not properties or "no-conflict" in properties:
            out[("no-conflict", pt.phase.name)] += _no_conflict(trace, k, pt, limit)
        if not properties or {"ring-locality", "data-flow"} & set(properties):
            for f in _accumulation(trace, k, pt, limit) + _sources(trace, k, pt, limit):
                if not properties or f.property in properties:
                    out.setdefault((f.property, f.phase), []).append(f)
    if not properties or "coverage" in properties:
        for eqn in S.problem.equations:
            if not [pt for pt in trace.phases if _computes(pt, eqn.target)]:
                out.setdefault(("coverage", "-"), []).append(
                    Finding("coverage", "-", f"nothing computes {eqn.target.name}", "no phase has it as target"))
    return out


def _computes(pt: PhaseTrace, array) -> bool:
    return pt.step.target is not None and pt.step.target.array == array and pt.op is not Op.MOVE


def _first_bad(trace, k, bad, limit):
    return [describe(trace, k, int(p)) for p in np.nonzero(bad)[0][:limit]]


def _well_formed(trace, k, pt, limit):
    from ringproof.model.ring.machine import _transposed

    a, snd = pt.active, pt.send
    bad = pt.busy & ((pt.pe < 1) | (pt.pe > trace.m))
    if pt.step.target is not None:
        bad |= a & (pt.target < 0)
    for o in pt.operands:
        bad |= a & (o < 0)
    bad |= snd & ((pt.sent < 0) | (pt.stored < 0))
    renamed = snd & ~bad & (pt.sent != pt.stored)
    if renamed.any():
        sym = [trace.layout.arrays.index(x) for x in trace.schedule.problem.symmetric_pairs]
        r = np.nonzero(renamed)[0]
        ok = np.isin(trace.layout.array_of(pt.sent[r]), sym) & (_transposed(trace, pt.sent[r]) == pt.stored[r])
        bad[r[~ok]] = True
    if bad.any():
        return [Finding("well-formed", pt.phase.name, "PE and indices in range, renames legal",
                        "a PE or an index is out of range, or an illegal rename", [it])
                for it in _first_bad(trace, k, bad, limit)]
    return []


def _keys(trace, pt, eqn):
    """Per iteration: the term key (target indices + reduction index) as integer arrays."""
    st = pt.step
    size = pt.size
    cols = [np.broadcast_to(np.asarray(x, dtype=np.int64), (size,)) for x in st.target.idx]
    if eqn.reduce:
        o, pos = eqn.reduce_at
        cols.append(np.broadcast_to(np.asarray(st.operands[o].idx[pos], dtype=np.int64), (size,)))
    return cols


def _coverage(trace, k, pt, limit):
    S, P = trace.schedule, trace.P
    if pt.op is Op.MOVE:
        return []
    eqn = S.problem.equation_for(pt.step.target.array)
    name = pt.phase.name
    if len([q for q in trace.phases if _computes(q, eqn.target)]) > 1:
        return []          # reported as unknown by the prover; nothing to enumerate against
    a = pt.active
    out = []
    if pt.op is not eqn.op:
        return [Finding("coverage", name, f"each term is one of {eqn.target.name}'s",
                        f"the step does {pt.op.value}, {eqn.target.name} is defined by {eqn.op.value}",
                        _first_bad(trace, k, a, 1))]
    key = _keys(trace, pt, eqn)
    ext = {"n": trace.n, "d": P.d}
    want = eqn.operands(P, *key)
    ok = np.ones(pt.size, dtype=bool)
    for got, ref in zip(pt.operands, want):
        ok &= got == trace.layout.ids(ref, pt.size)
    if eqn.reduce:
        ok &= (key[-1] >= 1) & (key[-1] <= ext[eqn.reduce])
    if eqn.where:
        ok &= np.broadcast_to(np.asarray(eqn.where(P, *key), dtype=bool), (pt.size,))
    for it in _first_bad(trace, k, a & ~ok, limit):
        out.append(Finding("coverage", name, f"each term is one of {eqn.target.name}'s",
                           "the operands are not a term of the equation", [it]))
    # injective
    dims = [ext[d] for d in eqn.target.dims] + ([ext[eqn.reduce]] if eqn.reduce else [])
    flat = np.zeros(pt.size, dtype=np.int64)
    for col, e in zip(key, dims):
        flat = flat * (e + 2) + np.clip(col, -1, e)
    act = np.nonzero(a)[0]
    order = act[np.argsort(flat[act], kind="stable")]
    dup = np.nonzero(flat[order][1:] == flat[order][:-1])[0]
    for i in dup[:limit]:
        out.append(Finding("coverage", name, "no term done twice (injective)", "two iterations do one term",
                           [describe(trace, k, int(order[i])), describe(trace, k, int(order[i + 1]))]))
    # onto, through the inverse witness
    grids = np.meshgrid(*[np.arange(1, e + 1) for e in dims], indexing="ij")
    req = [g.ravel() for g in grids]
    symmetric = eqn.target in S.problem.symmetric_pairs
    if eqn.where or symmetric:
        keep = np.ones(req[0].shape, dtype=bool)
        if eqn.where:
            keep &= np.broadcast_to(np.asarray(eqn.where(P, *req), dtype=bool), req[0].shape)
        if symmetric:
            keep &= req[1] <= req[0]
        req = [r[keep] for r in req]
    if pt.phase.inverse is None:
        return out
    inv = pt.phase.inverse(P, tuple(req))
    size = req[0].size
    idx = {n_: np.broadcast_to(np.asarray(inv[n_], dtype=np.int64), (size,)) for n_ in pt.phase.index_names}
    pos = pt.locate(idx)
    good = pos >= 0
    good[good] &= a[pos[good]]
    p = np.where(good, pos, 0)
    match = np.ones(size, dtype=bool)
    for col, r in zip(key, req):
        match &= col[p] == r if pt.size else False      # an empty phase does no term
    if symmetric:
        swapped = [req[1], req[0]] + req[2:]
        alt = np.ones(size, dtype=bool)
        for col, r in zip(key, swapped):
            alt &= col[p] == r if pt.size else False
        match |= alt
    good &= match
    for i in np.nonzero(~good)[0][:limit]:
        out.append(Finding("coverage", name, "every term done (inverse witness)",
                           f"term {tuple(int(r[i]) for r in req)} is not done where the inverse says",
                           [{"phase": name, **{n_: int(idx[n_][i]) for n_ in idx}}]))
    return out


def _no_conflict(trace, k, pt, limit):
    out = []
    in_range = pt.target >= 0               # an index out of range is well-formed's finding
    for what, col, sel in (("PE", pt.pe, pt.busy), ("target", pt.target, pt.active & in_range)):
        if what == "target" and pt.step.target is None:
            continue
        a = np.nonzero(sel)[0]
        key = pt.cycle[a] * (trace.layout.size + trace.m + 2) + col[a]
        order = a[np.argsort(key, kind="stable")]
        kk = pt.cycle[order] * (trace.layout.size + trace.m + 2) + col[order]
        dup = np.nonzero(kk[1:] == kk[:-1])[0]
        for i in dup[:limit]:
            out.append(Finding("no-conflict", pt.phase.name, "one op per PE per cycle, no write clash",
                               f"two iterations share a {what} in one cycle",
                               [describe(trace, k, int(order[i])), describe(trace, k, int(order[i + 1]))]))
    return out


def _locate(trace, phase_name, idx, size):
    """The phase a witness names and the positions of the witnessed iterations (-1: none)."""
    q = trace.phase(phase_name)
    if q.size == 0:
        return q, np.full(size, -1)
    full = {n_: np.broadcast_to(np.asarray(idx[n_], dtype=np.int32), (size,)) for n_ in q.phase.index_names}
    return q, q.locate(full)


def _accumulation(trace, k, pt, limit):
    if not pt.op.accumulates:
        return []
    name, out = pt.phase.name, []
    need = pt.node & ~pt.starts
    (mask, ph, idx), = pt.prev.alternatives
    q, pos = _locate(trace, ph, idx, pt.size)
    ok = pos >= 0
    if q.size == 0:
        ok[:] = False
    else:
        p = np.where(ok, pos, 0)
        ok &= q.node[p] & (q.target[p] == pt.target) & (q.cycle[p] < pt.cycle)
        ok &= np.where(q.moves[p], q.pe[p] % trace.m + 1 == pt.pe, q.pe[p] == pt.pe)
    for it in _first_bad(trace, k, need & ~ok, limit):
        out.append(Finding("ring-locality", name, "prev witness: the partial sum is here",
                           "the previous term is not where the witness says", [it]))
    same = [(j, qt) for j, qt in enumerate(trace.phases) if _computes(qt, pt.step.target.array)]
    firsts = np.concatenate([qt.target[qt.starts] for _, qt in same])
    u, c = np.unique(firsts, return_counts=True)
    if (c > 1).any():
        out.append(Finding("ring-locality", name, "one first term per sum",
                           f"{trace.layout.name(int(u[c > 1][0]))} is started twice"))
    prevs = []
    for j, qt in same:
        (mq, phq, idq), = qt.prev.alternatives
        qq, pq = _locate(trace, phq, idq, qt.size)
        sel = qt.node & ~qt.starts & (pq >= 0)
        prevs.append(trace.schedule.phase_index(phq) * (1 << 40) + pq[sel].astype(np.int64))
    u, c = np.unique(np.concatenate(prevs), return_counts=True)
    if (c > 1).any():
        out.append(Finding("ring-locality", name, "partial sums never fork",
                           "two terms claim the same previous term"))
    return out


def _holds(q, p, datum):
    """q's iterations p have `datum` on their PE: read it, touch it as their sum, or forward it."""
    h = (q.node[p] if q.op.accumulates else q.active[p]) & (q.target[p] == datum)
    for o in q.operands:
        h |= q.active[p] & (o[p] == datum)
    if q.send_source is not None:
        h |= q.send[p] & ~q.moves[p] & (q.sent[p] == datum)
    return h


def _needs_send_source(pt):
    own = pt.target == pt.sent
    for o in pt.operands:
        own |= o == pt.sent
    return pt.send & ~pt.moves & ~(pt.active & own)


def _sources(trace, k, pt, limit):
    out, name = [], pt.phase.name
    sites = [(f"operand {i + 1}", o, w, pt.active) for i, (o, w) in enumerate(zip(pt.operands, pt.sources))]
    if pt.send_source is not None:
        sites.append(("sent datum", pt.sent, pt.send_source, _needs_send_source(pt)))
    elif _needs_send_source(pt).any():
        out += [Finding("ring-locality", name, "sends only what it holds",
                        "a datum is forwarded with no source witness", [it])
                for it in _first_bad(trace, k, _needs_send_source(pt), limit)]
    for label, o, w, need in sites:
        for mask, ph, idx in w.alternatives:
            local = ph is None or ph == name
            prop = "ring-locality" if local else "data-flow"
            where = "home" if ph is None else ph
            sel = need & mask
            if ph is None:
                ok = (trace.home[np.maximum(o, 0)] == pt.pe) & (o >= 0)
                is_input = np.isin(trace.layout.array_of(np.maximum(o, 0)),
                                   [trace.layout.arrays.index(x) for x in trace.schedule.problem.inputs])
                ok &= is_input
                for it in _first_bad(trace, k, sel & ~ok, limit):
                    out.append(Finding(prop, name, f"{label} from home",
                                       "the datum is not an input placed on this PE", [it]))
                continue
            q, pos = _locate(trace, ph, idx, pt.size)
            if q.size == 0:
                for it in _first_bad(trace, k, sel, limit):
                    out.append(Finding(prop, name, f"{label} from {where}",
                                       f"phase {ph} has no iterations at this size", [it]))
                continue
            ok = pos >= 0
            p = np.where(ok, pos, 0)
            ok &= q.cycle[p] < pt.cycle
            held = (q.pe[p] == pt.pe) & _holds(q, p, o) & ~(q.moves[p] & (q.target[p] == o))
            sent = (q.pe[p] % trace.m + 1 == pt.pe) & q.send[p] & (q.stored[p] == o) & _holds(q, p, q.sent[p])
            ok &= held | sent
            for it in _first_bad(trace, k, sel & ~ok, limit):
                out.append(Finding(prop, name, f"{label} from {where}",
                                   "the datum is not where the witness says", [it]))
            if q.op.accumulates:
                # final: no later node continues the sum the witness names
                fin = sel & (pos >= 0) & (q.target[p] == o)
                for j, qt in enumerate(trace.phases):
                    if not _computes(qt, q.step.target.array):
                        continue
                    (mq, phq, idq), = qt.prev.alternatives
                    if phq != ph:
                        continue
                    _, pq = _locate(trace, phq, idq, qt.size)
                    succ = np.zeros(q.size, dtype=bool)
                    s = qt.node & ~qt.starts & (pq >= 0)
                    succ[pq[s]] = True
                    for it in _first_bad(trace, k, fin & succ[p], limit):
                        out.append(Finding(prop, name, f"{label} is final (no later term in {qt.phase.name})",
                                           "the datum is read before its sum is complete", [it]))
    return out


def sizes(max_n: int, max_m: int | None = None):
    """All (n, m) with m | n, n ≤ max_n (and m ≤ max_m)."""
    return [(n, m) for n in range(1, max_n + 1) for m in range(1, n + 1)
            if n % m == 0 and (max_m is None or m <= max_m)]


_SWEEP: tuple = ()


def _check_one(nm):
    schedule, properties = _SWEEP
    n, m = nm
    found = check_trace(build_trace(schedule, n, m), properties)
    return n, m, {key: (fs[0] if fs else None) for key, fs in found.items()}


def check_sizes(schedule: Schedule, max_n: int, properties=None, max_m=None, jobs: int = 0):
    """Enumerate every (n, m) up to max_n: (property, phase) -> smallest failing (n, m, Finding) or None."""
    global _SWEEP
    _SWEEP = (schedule, properties)
    todo = sizes(max_n, max_m)
    workers = jobs or os.cpu_count() or 1
    if workers > 1 and len(todo) > 8 and can_fork():
        with worker_pool(workers) as pool:
            raw = pool_map(pool, _check_one, sorted(todo, reverse=True), chunksize=4)
    else:
        raw = [_check_one(nm) for nm in todo]
    verdicts: dict = {}
    for n, m, found in sorted(raw, key=lambda r: (r[0], r[1])):
        for key, f in found.items():
            if verdicts.get(key) is None:
                verdicts[key] = (n, m, f) if f is not None else None
    return verdicts
