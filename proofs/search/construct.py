"""Runs at the lower bound built outside the DSL (docs/optimal.md §6): symmetric for every n and
m | n (`symmetric_run`, a closed-form phase 1 before algo2-fast's phases 2 and 3), masked at
n = m = d odd (`masked_run`, a diagonal phase 1 and phase 3 around a phase 2 found by SAT).

Symmetric, phase 1 in n²(n+1)/(2m) cycles with every PE busy in every cycle (x[·, C] on PE C mod m):
think of n virtual PEs, one per column C, over M = n(n+1)/2 virtual cycles, with f(C) =
⌈C(n+1)/2⌉. Virtual PE C at virtual cycle t works on chain (t − f(C)) mod M, so each chain visits
every column once and, as f steps by δ_C = f(C+1) − f(C) ≥ 1 and f(n) = M, at increasing times
from column e + 1 round to column e, where M − f(e+1) ≤ chain < M − f(e): δ_e chains end on
column e, ⌈(n+1)/2⌉ or ⌊(n+1)/2⌋, exactly the number of pairs {A, B} with (A−1)+(B−1) ≡ e (mod n)
for each e (and their order). Each chain moves on right after its MAC, so a virtual PE sends one
datum per cycle. Real PE p runs the k = n/m virtual PEs p, p + m, ... one after the other (real
cycle k·t + i for column p + i·m): a move from column C to C + 1 is a move from PE p to p + 1 (or
m − 1 to 0), one per real cycle, and lands before the next column's slot. So phase 1 ends each pair
where algo2-fast's phase 2 reads it (PE (A−1)+(B−1) mod m), and phases 2 and 3 are algo2-fast's,
which meet their bounds: T is the bound for every n and m | n. No chain has to move in lock step
(docs/optimal.md §6 showed lock-step chains cannot reach it for even n); the waiting sums are the
freedom that was missing.

Masked, at m = n = d with n = 2h − 1 odd: phases 1 and 3 of the bound take n·h cycles each, every PE busy in
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
from ringproof.model.bitlevel.bridge import to_run
from ringproof.model.bitlevel.problem import Problem, spread_cycles
from ringproof.model.bitlevel.types import SatVerdict
from ringproof.proofs.search.cnf import Encoding
from ringproof.proofs.search.portfolio import DEFAULT_SOLVER, solve


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


def symmetric_pairs_on(n: int, e: int) -> list[tuple[int, int]]:
    """The pairs (a, b), a ≥ b, 0-based, with a + b ≡ e (mod n), in algo2-fast's block order g."""
    half = e // 2
    out = []
    for g in range(n // 2 + 1):
        b = g if g <= half else g + e - half
        a = (e - b) % n
        if a >= b:
            out.append((a, b))
    return out


def symmetric_phase1(n: int, m: int) -> tuple[list[Op], list[Send], int]:
    """The closed-form phase 1 (module docstring): its ops, sends and length n²(n+1)/(2m)."""
    if not (isinstance(n, int) and isinstance(m, int) and 1 <= m <= n and n % m == 0):
        raise BadInput(f"expected sizes with m | n, got n={n!r}, m={m!r}")
    k, M = n // m, n * (n + 1) // 2
    f = [(C * (n + 1) + 1) // 2 for C in range(n + 1)]
    chain_pair = {}
    for e in range(n):
        for g, pair in enumerate(symmetric_pairs_on(n, e)):
            chain_pair[M - f[e + 1] + g] = pair
    ops, sends = [], []
    for t in range(M):
        for C in range(n):
            a, b = chain_pair[(t - f[C]) % M]
            cycle, pe = k * t + C // m, C % m
            ops.append(Op(cycle, pe, "MAC1", b, a, C))
            if t + f[C + 1] - f[C] < M:          # not the chain's last column: it moves on
                sends.append(Send(cycle, pe, ("w1", b, a)))
    return ops, sends, k * M


def symmetric_run(n: int, m: int) -> Run:
    """The closed-form phase 1, then algo2-fast's phases 2 and 3 (its run through the bridge, shifted)."""
    from ringproof.schedules.algo2_fast import ALGO2_FAST

    ops, sends, L1 = symmetric_phase1(n, m)
    fast = to_run(ALGO2_FAST, n, m)
    start = min(o.t for o in fast.ops if o.kind != "MAC1")
    ops += [Op(o.t - start + L1, o.p, o.kind, o.i, o.j, o.l) for o in fast.ops if o.kind != "MAC1"]
    sends += [Send(s.t - start + L1, s.p, s.datum) for s in fast.sends if s.t >= start]
    return Run("symmetric", n, m, n, fast.T - start + L1, tuple(sorted(ops, key=lambda o: (o.t, o.p))),
               tuple(sorted(sends, key=lambda s: (s.t, s.p))), fast.placement)
