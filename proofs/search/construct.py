"""Masked runs at the lower bound, n = m = d odd: a diagonal phase 1 and phase 3 around a phase 2
found by SAT (docs/optimal.md §6).

At m = n = d with n = 2h − 1 odd, phases 1 and 3 of the bound take n·h cycles each, every PE busy in
every cycle. A phase-1 chain that moves one PE per cycle over the n columns (x[·, C] on PE C)
stays on one diagonal of the PE × cycle grid, and the h chains of a diagonal all end on the same
PE: so phase 1 can leave **any** h pairs on each PE, and phase 3, copying each w[A, B] along a
diagonal from where its DIV ran, accepts any h DIVs per PE. What is left is phase 2: EACs and DIVs
in n + K(n) cycles. `phase2` asks the bit-level encoding (`cnf.Encoding`) for it, with the choice
of which h pairs each PE holds encoded as a one-column phase 1 (inputs on every PE, no sends, h
cycles: every PE makes exactly h w1) and h DIVs per PE (cardinality clauses). `masked_run` puts the
three phases together; the caller replays it (`check_run`, `sat_check_run`) like every witness.

With `e_sends=False` no e_AB travels, so each DIV runs on the PE of its EAC (what a DSL schedule
gives through the bridge, whose DIV reads e where the EAC left it): then phase 2 needs at least
2n − 1 cycles at m = n (docs/optimal.md §6), checked here by the solver at small n.
"""

from __future__ import annotations

from pysat.card import CardEnc, EncType

from ringproof.errors import BadInput
from ringproof.model.bitlevel import Op, Run, Send
from ringproof.model.bitlevel.problem import Problem, spread_cycles
from ringproof.proofs.search.cnf import Encoding
from ringproof.proofs.search.portfolio import DEFAULT_SOLVER, solve
from ringproof.model.bitlevel.types import SatVerdict


def _checked(n: int) -> int:
    if not isinstance(n, int) or n < 1 or n % 2 == 0:
        raise BadInput(f"the diagonal construction needs an odd n ≥ 1, got n={n!r}")
    return (n + 1) // 2


def column_placement(n: int) -> dict:
    """q[A, C], k[B, C], v[B, C] on PE C (0-based), as the DSL schedules place them."""
    return {(a, i, l): l for a in ("q", "k", "v") for i in range(n) for l in range(n)}


def phase2(n: int, L2: int, e_sends: bool = True, solver: str = DEFAULT_SOLVER, timeout: float | None = None):
    """(verdict, w1_pe, ops, sends): a phase 2 of L2 cycles at m = n (0-based cycles from its start),
    w1_pe {(A, B): PE} the h pairs each PE holds after phase 1, ops [(t, p, kind, A, B)], sends
    [(t, p, datum)]; None for the last three unless the verdict is SAT."""
    h = _checked(n)
    prob = Problem("masked", n, n, d=1).up_to(2)
    prob.initial = {x: frozenset(range(n)) for x in prob.inputs}     # the choice: any PE may make any w1
    enc = Encoding(prob, h + L2, split=(h, L2, 0), compact=False)
    cnf = enc.cnf
    for (x, p, t), v in list(enc.send.items()) + list(enc.mv.items()):
        if t < h or (not e_sends and x[0] == "e"):
            cnf.add([-v])
    for p in range(n):
        divs = [v for k, s in enumerate(prob.ops) if s.key[0] == "DIV" for (q, _), v in enc.opv[k].items() if q == p]
        card = CardEnc.equals(lits=divs, bound=h, top_id=cnf.nv, encoding=EncType.seqcounter)
        cnf.nv = max(cnf.nv, card.nv)
        cnf.clauses.extend(card.clauses)
    verdict, model, _ = solve(cnf.clauses, cnf.nv, solver, timeout)
    if verdict != SatVerdict.SAT:
        return verdict, None, None, None
    place, sends = enc.decode(model)
    w1_pe = {(i, j): p for (kind, i, j, _), (p, _) in place.items() if kind == "MAC1"}
    ops = sorted((t - h, p, kind, i, j) for (kind, i, j, _), (p, t) in place.items() if kind != "MAC1")
    return verdict, w1_pe, ops, [(t - h, p, x) for t, p, x in sends if t >= h]


def masked_run(n: int, w1_pe: dict, ops: list, sends: list, L2: int) -> Run:
    """The run: phase 1 on diagonals ending where `w1_pe` says, the given phase 2, phase 3 on
    diagonals starting at the DIVs. PE d's j-th pair is the chain of cycles j·n .. j·n + n − 1 on
    the diagonal p − t ≡ d + 1 (mod n): it ends on PE d; phase 3 mirrors it from the DIV's PE."""
    h = _checked(n)
    L1 = n * h
    out_ops, out_sends = [], []
    ends: dict = {}
    for ab, p in sorted(w1_pe.items()):
        ends.setdefault(p, []).append(ab)
    starts: dict = {}
    for t, p, kind, A, B in ops:
        out_ops.append(Op(L1 + t, p, kind, A, B))
        if kind == "DIV":
            starts.setdefault(p, []).append((A, B))
    out_sends += [Send(L1 + t, p, x) for t, p, x in sends]
    for lane, kind, datum, base, shift in ((ends, "MAC1", "w1", 0, 1), (starts, "MAC3", "w", L1 + L2, 0)):
        if sorted(len(v) for v in lane.values()) != [h] * n:
            raise BadInput(f"each PE must hold {h} {datum} for the diagonals of n={n}")
        for d, pairs in lane.items():
            for j, (A, B) in enumerate(sorted(pairs)):
                for s in range(n):
                    t, pe = base + j * n + s, (d + s + shift) % n
                    out_ops.append(Op(t, pe, kind, A, B, pe))
                    if s < n - 1:
                        out_sends.append(Send(t, pe, (datum, A, B)))
    return Run("masked", n, n, n, 2 * L1 + L2, tuple(sorted(out_ops, key=lambda o: (o.t, o.p))),
               tuple(sorted(out_sends, key=lambda s: (s.t, s.p))), column_placement(n))


def at_bound(n: int, solver: str = DEFAULT_SOLVER, timeout: float | None = None) -> tuple[SatVerdict, Run | None]:
    """A masked run with T = the bound (phase 2 in n + K(n) cycles), or the solver's verdict on why not."""
    L2 = n + spread_cycles(n, n)
    verdict, w1_pe, ops, sends = phase2(n, L2, solver=solver, timeout=timeout)
    return verdict, (masked_run(n, w1_pe, ops, sends, L2) if w1_pe is not None else None)
