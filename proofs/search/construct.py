"""Runs at the lower bound built outside the DSL (docs/optimal.md §6): symmetric for every n and
m | n (`symmetric_run`), masked at n = m = d (`masked_run` around a phase 2 found by SAT).

Waiting chains (`waiting_chains`), at m = n over M = n(n+1)/2 cycles: given how many chains end on
each column e (δ_e ≥ 1, Σ δ_e = M), let f(0) = 0 and f(C+1) = f(C) + δ_C, so f(n) = M. PE C at cycle
t works on chain (t − f(C)) mod M. Each PE runs one op per cycle; each chain takes every column
once, at increasing cycles (f grows by δ ≥ 1 per column and by M round the ring) from column e + 1
round to column e, where M − f(e+1) ≤ chain < M − f(e): δ_e chains end on column e, in any order.
A chain moves (or copies its datum) on right after its op, so a PE sends one datum per cycle, and
it waits where it arrives early. Phases 1 and 3 of symmetric and masked attention at the bound
(n(n+1)/2 chains of n ops: every PE busy in every cycle) are such chains, for any count of pairs
left on (phase 1) or taken from (phase 3) each PE.

Symmetric: δ_e is the number of pairs {A, B} with (A−1)+(B−1) ≡ e (mod n) (f(C) = ⌈C(n+1)/2⌉),
so phase 1 leaves each pair where algo2-fast's phase 2 reads it, and phases 2 and 3 are
algo2-fast's: T is the bound. For m < n, PE p runs the k = n/m columns p + i·m one after the other
(cycle k·t + i): a move from column C to C + 1 is a move to the next PE, one per cycle, landing
before that column's slot. `schedules/algo2_even.py` is this phase 1 at m = n in the DSL.

Masked: `phase2` asks the SAT encoding of bitlevel.md (`cnf.Encoding`) for a phase 2 of n + K(n)
cycles with the placement free (a one-column phase 1 whose inputs are on every PE and which sends
nothing, ⌈(n+1)/2⌉ cycles: each PE makes up to that many w1, at least one) and at least one DIV per
PE; `masked_run` puts waiting chains around it. The caller replays the run (`check_run`,
`sat_check_run`) like every witness. With `e_sends=False` no e_AB travels, so each DIV runs on
the PE of its EAC, as a DSL schedule's does through the bridge: then phase 2 needs at least 2n − 1
cycles at m = n (docs/optimal.md §6), which the solver confirms at small n.
"""

from __future__ import annotations

from pysat.card import CardEnc, EncType

from ringproof.errors import BadInput
from ringproof.model.bitlevel import BitOp, BitSend, Run
from ringproof.model.bitlevel.bridge import to_run
from ringproof.model.bitlevel.problem import BitProblem, spread_cycles
from ringproof.model.bitlevel.types import SatVerdict
from ringproof.proofs.search.cnf import Encoding, EncodingModes
from ringproof.proofs.search.portfolio import DEFAULT_SOLVER, solve


def column_placement(n: int) -> dict:
    """q[A, C], k[B, C], v[B, C] on PE C (0-based), as the DSL schedules place them."""
    return {(a, i, l): l for a in ("q", "k", "v") for i in range(n) for l in range(n)}


def waiting_chains(n: int, ends: dict):
    """(item, column C, cycle t, last) of every MAC of the chains `ends` {column e: [items]} asks for,
    each ending on its column e, every column e with at least one (docstring: f steps by len(ends[e]))."""
    if sorted(ends) != list(range(n)) or not all(ends[e] for e in range(n)):
        raise BadInput(f"every column 0..{n - 1} must end at least one chain")
    f = [0]
    for e in range(n):
        f.append(f[-1] + len(ends[e]))
    M = f[n]
    for e in range(n):
        for g, item in enumerate(ends[e]):
            c = M - f[e + 1] + g
            for C in range(n):
                yield item, C, (c + f[C]) % M, C == e


def phase2(n: int, L2: int, e_sends: bool = True, solver: str = DEFAULT_SOLVER, timeout: float | None = None):
    """(verdict, w1_pe, ops, sends): a masked phase 2 of L2 cycles at m = n (0-based cycles from its
    start), w1_pe {(A, B): PE} where phase 1 leaves each pair (at least one per PE, at most
    ⌈(n+1)/2⌉), ops [(t, p, kind, A, B)] with at least one DIV per PE, sends [(t, p, datum)]; None for
    the last three unless the verdict is SAT."""
    if not isinstance(n, int) or n < 1:
        raise BadInput(f"expected a positive n, got n={n!r}")
    cap = (n + 2) // 2
    prob = BitProblem("masked", n, n, d=1).up_to(2)
    prob.initial = {x: frozenset(range(n)) for x in prob.inputs}     # the choice: any PE may make any w1
    enc = Encoding(prob, cap + L2, EncodingModes(split=(cap, L2, 0), compact=False))
    cnf = enc.cnf
    for (x, p, t), v in list(enc.send.items()) + list(enc.mv.items()):
        if t < cap or (not e_sends and x[0] == "e"):
            cnf.add([-v])
    for kind in ("MAC1", "DIV"):
        for p in range(n):
            lits = [v for k, s in enumerate(prob.ops) if s.key[0] == kind for (q, _), v in enc.opv[k].items() if q == p]
            card = CardEnc.atleast(lits=lits, bound=1, top_id=cnf.nv, encoding=EncType.seqcounter)
            cnf.nv = max(cnf.nv, card.nv)
            cnf.clauses.extend(card.clauses)
    verdict, model, _ = solve(cnf.clauses, cnf.nv, solver, timeout)
    if verdict != SatVerdict.SAT:
        return verdict, None, None, None
    place, sends = enc.decode(model)
    w1_pe = {(i, j): p for (kind, i, j, _), (p, _) in place.items() if kind == "MAC1"}
    ops = sorted((t - cap, p, kind, i, j) for (kind, i, j, _), (p, t) in place.items() if kind != "MAC1")
    return verdict, w1_pe, ops, [(t - cap, p, x) for t, p, x in sends if t >= cap]


def masked_run(n: int, w1_pe: dict, ops: list, sends: list, L2: int) -> Run:
    """The run at m = n = d: phase 1 by `waiting_chains` ending each pair where `w1_pe` says, the given
    phase 2, phase 3 by `waiting_chains` whose copies of w[A, B] start at its DIV (ending one PE
    before it); phases 1 and 3 take n(n+1)/2 cycles each, every PE busy in every cycle."""
    M = n * (n + 1) // 2
    out_ops = [BitOp(M + t, p, kind, A, B) for t, p, kind, A, B in ops]
    out_sends = [BitSend(M + t, p, x) for t, p, x in sends]
    ends1: dict = {e: [] for e in range(n)}
    ends3: dict = {e: [] for e in range(n)}
    for ab, p in sorted(w1_pe.items()):
        ends1[p].append(ab)
    for t, p, kind, A, B in ops:
        if kind == "DIV":
            ends3[(p - 1) % n].append((A, B))
    for ends, kind, datum, base in ((ends1, "MAC1", "w1", 0), (ends3, "MAC3", "w", M + L2)):
        for (A, B), C, t, last in waiting_chains(n, ends):
            out_ops.append(BitOp(base + t, C, kind, A, B, C))
            if not last:
                out_sends.append(BitSend(base + t, C, (datum, A, B)))
    return Run("masked", n, n, n, 2 * M + L2, tuple(sorted(out_ops, key=lambda o: (o.t, o.p))),
               tuple(sorted(out_sends, key=lambda s: (s.t, s.p))), column_placement(n))


def at_bound(n: int, solver: str = DEFAULT_SOLVER, timeout: float | None = None) -> tuple[SatVerdict, Run | None]:
    """A masked run with T = the bound (phase 2 in n + K(n) cycles), or the solver's verdict on why not."""
    L2 = max(n + 1, n + spread_cycles(n, n))
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


def symmetric_phase1(n: int, m: int) -> tuple[list[BitOp], list[BitSend], int]:
    """The symmetric phase 1 (module docstring): its ops, sends and length n²(n+1)/(2m)."""
    if not (isinstance(n, int) and isinstance(m, int) and 1 <= m <= n and n % m == 0):
        raise BadInput(f"expected sizes with m | n, got n={n!r}, m={m!r}")
    k = n // m
    ops, sends = [], []
    for (a, b), C, t, last in waiting_chains(n, {e: symmetric_pairs_on(n, e) for e in range(n)}):
        cycle, pe = k * t + C // m, C % m
        ops.append(BitOp(cycle, pe, "MAC1", b, a, C))
        if not last:
            sends.append(BitSend(cycle, pe, ("w1", b, a)))
    return ops, sends, k * n * (n + 1) // 2


def symmetric_run(n: int, m: int) -> Run:
    """The closed-form phase 1, then algo2-fast's phases 2 and 3 (its run through the bridge, shifted)."""
    from ringproof.schedules.algo2_fast import ALGO2_FAST

    ops, sends, L1 = symmetric_phase1(n, m)
    fast = to_run(ALGO2_FAST, n, m)
    start = min(o.t for o in fast.ops if o.kind != "MAC1")
    ops += [BitOp(o.t - start + L1, o.p, o.kind, o.i, o.j, o.l) for o in fast.ops if o.kind != "MAC1"]
    sends += [BitSend(s.t - start + L1, s.p, s.datum) for s in fast.sends if s.t >= start]
    return Run("symmetric", n, m, n, fast.T - start + L1, tuple(sorted(ops, key=lambda o: (o.t, o.p))),
               tuple(sorted(sends, key=lambda s: (s.t, s.p))), fast.placement)
