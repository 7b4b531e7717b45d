"""The whole-trace ring machine checker, kept as the test oracle of the streaming simulator
(`ringproof.model.ring.machine`): it builds every iteration of every phase at once (O(n³) records)
and checks the machine rules and the numerics on them. This is the checker `machine.run` used until
it streamed; the streaming one must give the same cycles, counts, output and violations.
"""

from __future__ import annotations

import numpy as np

from ringproof.model.ring.machine import RunResult, Violation, describe, transposed
from ringproof.model.ring.reference import random_inputs, reference_output
from ringproof.model.ring.trace import Trace, build_trace
from ringproof.schedules.dsl import ALWAYS_COUNTED, ARITHMETIC, Op, Schedule


def reference_run(schedule: Schedule, n: int, m: int, seed: int = 0, max_violations: int = 5,
                  d: int | None = None, scale: float = 1.0) -> RunResult:
    """`machine.run` on the whole trace."""
    trace = build_trace(schedule, n, m, d)
    violations = check_machine(trace, max_violations)
    ops = {kind: 0 for kind in ALWAYS_COUNTED}             # and each other kind the trace runs
    for pt in trace.phases:
        ops[pt.op.value] = ops.get(pt.op.value, 0) + int(pt.active.sum())
        ops["MOVE"] += int((pt.send & ~pt.active).sum())      # cycles that only forward
    arith = sum(ops.get(k, 0) for k in ARITHMETIC)
    util = arith / (m * trace.cycles) if trace.cycles else 0.0
    err = numeric_error(trace, seed, scale) if not any(v.rule == "well-formed" for v in violations) else float("inf")
    return RunResult(n, m, trace.cycles, ops, util, err, violations)


def _events(trace: Trace):
    """The busy iterations (an op, or only a send) of all phases as flat arrays."""
    rows = []
    for k, pt in enumerate(trace.phases):
        b = np.nonzero(pt.busy)[0]
        acc = pt.op.accumulates
        rows.append(dict(ph=np.full(b.size, k), pos=b, pe=pt.pe[b], t=pt.cycle[b],
                         active=pt.active[b], target=pt.target[b],
                         node=pt.node[b], starts=pt.starts[b], acc=acc,
                         operands=[o[b] for o in pt.operands], send=pt.send[b], sent=pt.sent[b],
                         stored=pt.stored[b], moves=pt.moves[b],
                         has_target=pt.step.target is not None))
    return rows


def check_machine(trace: Trace, limit: int = 5) -> list:
    m, out = trace.m, []
    rows = _events(trace)
    problem = trace.schedule.problem

    def who(k, positions):
        return tuple(describe(trace, int(kk), int(p)) for kk, p in zip(k, positions))

    def add(rule, msg, k=(), pos=()):
        if len(out) < limit:
            out.append(Violation(rule, msg, who(k, pos)))

    # well-formed: PEs and indices in range; renames only between declared-equal data
    sym = [trace.layout.arrays.index(a) for a in problem.symmetric_pairs]
    for r in rows:
        bad = (r["pe"] < 1) | (r["pe"] > m)
        act = r["active"]
        bad |= act & (r["target"] < 0) & r["has_target"]
        for o in r["operands"]:
            bad |= act & (o < 0)
        bad |= r["send"] & ((r["sent"] < 0) | (r["stored"] < 0))
        renamed = r["send"] & (r["sent"] != r["stored"]) & ~bad
        if renamed.any():
            ok = np.isin(trace.layout.array_of(r["sent"][renamed]), sym)
            ok &= transposed(trace, r["sent"][renamed]) == r["stored"][renamed]
            bad[np.nonzero(renamed)[0][~ok]] = True
        for i in np.nonzero(bad)[0][:1]:
            add("well-formed", "a PE or an array index is out of range, or a copy is renamed "
                "to a datum not declared equal", [r["ph"][i]], [r["pos"][i]])
    if out:
        return out

    cat = lambda key: np.concatenate([np.broadcast_to(r[key], r["pe"].shape) for r in rows])
    ph, pos, pe, t = cat("ph"), cat("pos"), cat("pe"), cat("t")

    # one op (or forward) per PE per cycle: so at most one send per link per cycle
    key = t * (m + 1) + pe
    order = np.argsort(key, kind="stable")
    dup = np.nonzero(key[order][1:] == key[order][:-1])[0]
    for i in dup[:1]:
        a, b = order[i], order[i + 1]
        add("no-conflict", f"two ops on PE {pe[a]} in cycle {t[a]}", [ph[a], ph[b]], [pos[a], pos[b]])

    # running sums: their nodes (terms and forwards) in time order, each where the previous left it
    node, starts, active = cat("node"), cat("starts"), cat("active")
    acc = np.where(node, cat("target"), -1)
    moves = cat("moves")
    sel = np.nonzero(acc >= 0)[0]
    order = sel[np.lexsort((t[sel], acc[sel]))]
    same = acc[order][1:] == acc[order][:-1]
    head = np.ones(order.size, dtype=bool)
    head[1:] = ~same
    for i in np.nonzero(head & ~starts[order])[0][:1]:
        j = order[i]
        add("ring-locality", f"the sum {trace.layout.name(acc[j])} is continued before it is started",
            [ph[j]], [pos[j]])
    a, b = order[:-1][same], order[1:][same]
    clash = t[a] == t[b]
    for i in np.nonzero(clash)[0][:1]:
        add("no-conflict", f"{trace.layout.name(acc[a[i]])} is touched twice in cycle {t[a[i]]}",
            [ph[a[i]], ph[b[i]]], [pos[a[i]], pos[b[i]]])
    where_left = np.where(moves[a], pe[a] % m + 1, pe[a])
    lost = ~clash & ~starts[b] & (pe[b] != where_left)
    for i in np.nonzero(lost)[0][:1]:
        add("ring-locality", f"the partial sum {trace.layout.name(acc[a[i]])} is on PE {where_left[i]}, "
            f"not on PE {pe[b[i]]} where it is needed next", [ph[a[i]], ph[b[i]]], [pos[a[i]], pos[b[i]]])

    # final values: where and from when each datum is available
    last = np.ones(order.size, dtype=bool)
    last[:-1] = ~same
    fin = order[last]                                   # last node of each sum
    terms = order[active[order]]
    final_t = np.full(trace.layout.size, -1)
    final_t[acc[terms]] = t[terms]                      # time of the last term (sorted by time)
    hold_id, hold_pe, hold_t = [], [], []
    inputs = np.nonzero(trace.home > 0)[0]
    hold_id.append(inputs), hold_pe.append(trace.home[inputs]), hold_t.append(np.full(inputs.size, -1))
    hold_id.append(acc[fin]), hold_pe.append(np.where(moves[fin], pe[fin] % m + 1, pe[fin]))
    hold_t.append(t[fin] + 1)
    for r in rows:
        if not r["acc"] and r["has_target"]:            # single-assignment results (DIV)
            act = r["active"]
            hold_id.append(r["target"][act]), hold_pe.append(r["pe"][act]), hold_t.append(r["t"][act] + 1)
        s = r["send"] & ~r["moves"]
        sent, tt = r["sent"][s], r["t"][s]
        ok = (final_t[sent] < 0) | (final_t[sent] <= tt)   # a partial sum copied early is stale
        hold_id.append(r["stored"][s][ok]), hold_pe.append(r["pe"][s][ok] % m + 1)
        hold_t.append(tt[ok] + 1)
    H = np.concatenate(hold_id), np.concatenate(hold_pe), np.concatenate(hold_t)
    hkey = H[0].astype(np.int64) * (m + 1) + H[1]
    horder = np.lexsort((H[2], hkey))
    hkey, htime = hkey[horder], H[2][horder]
    firsts = np.ones(hkey.size, dtype=bool)
    firsts[1:] = hkey[1:] != hkey[:-1]
    hkey, htime = hkey[firsts], htime[firsts]      # earliest availability per (datum, PE)

    def available(ids, pes, times):
        k = ids.astype(np.int64) * (m + 1) + pes
        i = np.clip(np.searchsorted(hkey, k), 0, max(hkey.size - 1, 0))
        return (hkey.size > 0) & (hkey[i] == k) & (htime[i] <= times)

    for r in rows:
        act = r["active"]
        checks = [(o, act, "operand") for o in r["operands"]]
        own = act & (r["sent"] == r["target"])          # an op may send what it just produced
        checks.append((r["sent"], r["send"] & ~r["moves"] & ~own, "sent datum"))
        for ids, mask, kind in checks:
            ok = available(ids, r["pe"], r["t"]) | ~mask
            for i in np.nonzero(~ok)[0][:1]:
                add("ring-locality", f"{trace.layout.name(ids[i])} ({kind}) is not on PE {r['pe'][i]} "
                    f"with its final value in cycle {r['t'][i]}", [r["ph"][i]], [r["pos"][i]])
    return out


def numeric_error(trace: Trace, seed: int = 0, scale: float = 1.0) -> float:
    """Max |y - y_ref| / max |y_ref| for random inputs, executing the ops phase by phase."""
    problem = trace.schedule.problem
    inputs = random_inputs(problem, trace.n, trace.P.d, seed)
    y = execute(trace, inputs, scale)
    ref = reference_output(problem, inputs, scale)
    err = np.abs(y - ref).max() / np.abs(ref).max()
    return float(err) if np.isfinite(err) else float("inf")


def execute(trace: Trace, inputs: dict, scale: float = 1.0) -> np.ndarray:
    """The output the ring computes from `inputs` (name -> array), op by op in cycle order.
    `scale` multiplies w1 where it is exponentiated (EAC, DIV): 1 is the paper's phase 1, 1/√d
    the usual scaled dot product."""
    problem = trace.schedule.problem
    val = np.full(trace.layout.size, np.nan)
    for name, arr in inputs.items():
        off = trace.layout.offset[name]
        val[off:off + arr.size] = arr.ravel()
    for pt in trace.phases:
        a = pt.active
        ops = [val[o[a]] for o in pt.operands]
        tgt = pt.target[a]
        if pt.op.accumulates:
            term = ops[0] * ops[1] if pt.op is Op.MAC else np.exp(scale * ops[0])
            first = pt.starts[a]
            _accumulate(val, tgt, pt.cycle[a], first, term)
        elif pt.op is Op.DIV:
            val[tgt] = np.exp(scale * ops[0]) / ops[1]
        s = pt.send & (pt.stored != pt.sent)
        val[pt.stored[s]] = val[pt.sent[s]]
    off = trace.layout.offset[problem.output.name]
    shape = trace.layout.extents[problem.output.name]
    return val[off:off + int(np.prod(shape))].reshape(shape)


def _accumulate(val, tgt, t, first, term):
    """Add each target's terms in time order; a `first` term restarts the sum from 0."""
    order = np.lexsort((t, tgt))
    tgt, first, term = tgt[order], first[order], term[order]
    start = np.ones(tgt.size, dtype=bool)
    start[1:] = tgt[1:] != tgt[:-1]
    restart = first & ~start
    # segment = number of restarts so far within the target; only the last segment survives
    seg = np.cumsum(restart) - np.maximum.accumulate(np.where(start, np.cumsum(restart), 0))
    last = np.zeros(val.size, dtype=np.int64)
    np.maximum.at(last, tgt, seg)
    keep = seg == last[tgt]
    begins = np.unique(tgt[first | start])
    val[begins] = np.where(np.isnan(val[begins]) | np.isin(begins, tgt[first]), 0.0, val[begins])
    np.add.at(val, tgt[keep], term[keep])
