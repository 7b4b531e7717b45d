"""From a DSL schedule to a bit-level Run: the same ops and sends, 0-based, for the SAT check.

The index-formula machine (docs/machine.md) and the bit-level machine (docs/bitlevel.md) are the
same ring; a DSL run maps op for op: MAC into w1 is MAC1(A, B, C), EAC is EAC(A, B), DIV is
DIV(A, B), MAC into y is MAC3(A, B, C). In the symmetric problem w1[A,B] and w1[B,A] are one datum
there, so a copy renamed to the transpose is an ordinary copy.
"""

from __future__ import annotations

from ringproof.model.bitlevel import BitOp, BitSend, Run
from ringproof.model.ring.trace import Trace, build_trace
from ringproof.schedules.dsl import Schedule

KIND = {"w1": "MAC1", "s": "EAC", "w": "DIV", "y": "MAC3"}


def _datum(trace: Trace, ident: int, symmetric: bool) -> tuple:
    """('w1', i, j), ('q', i, l), ... with 0-based indices, as the bit-level model names data."""
    name = trace.layout.name(ident)
    array, rest = name.split("[")
    idx = tuple(int(x) - 1 for x in rest.rstrip("]").split(","))
    if symmetric and array == "w1":
        idx = (min(idx), max(idx))
    return (array, *idx)


def to_run(schedule: Schedule, n: int, m: int) -> Run:
    """The bit-level Run of `schedule` for (n, m), with the schedule's input placement."""
    trace = build_trace(schedule, n, m)
    symmetric = schedule.problem.name == "symmetric"
    ops, sends = [], []
    for pt in trace.phases:
        st = pt.step
        for pos in range(pt.size):
            t, p = int(pt.cycle[pos]), int(pt.pe[pos]) - 1
            if pt.active[pos] and st.target is not None and st.target.array.name in KIND:
                target = _datum(trace, int(pt.target[pos]), symmetric)[1:]
                kind = KIND[st.target.array.name]
                if kind == "MAC1":
                    ops.append(BitOp(t, p, kind, target[0], target[1],
                                  _datum(trace, int(pt.operands[0][pos]), symmetric)[2]))
                elif kind == "MAC3":        # y[A, C] += w[A, B] · v[B, C]
                    b = _datum(trace, int(pt.operands[0][pos]), symmetric)[2]
                    ops.append(BitOp(t, p, kind, target[0], b, target[1]))
                elif kind == "EAC":         # s[A] += exp(w1[A, B]), w1 possibly named w1[B, A]
                    _, x0, x1 = _datum(trace, int(pt.operands[0][pos]), False)
                    ops.append(BitOp(t, p, kind, target[0], x0 + x1 - target[0]))
                else:
                    ops.append(BitOp(t, p, kind, target[0], target[1]))
            if pt.send[pos]:
                sends.append(BitSend(t, p, _datum(trace, int(pt.sent[pos]), symmetric)))
    placement = {}
    for ident in range(trace.layout.size):
        if trace.home[ident] > 0:
            placement[_datum(trace, ident, symmetric)] = int(trace.home[ident]) - 1
    variant = schedule.problem.name
    return Run(variant, n, m, trace.P.d, trace.cycles, tuple(ops), tuple(sorted(set(sends),
               key=lambda s: (s.t, s.p))), placement)
