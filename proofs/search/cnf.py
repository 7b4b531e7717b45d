"""The machine as CNF over Boolean variables in the paper's spirit.

Variables: op(o,p,t) op o on PE p in cycle t; at(x,p,t) datum x in p's memory at the start of t;
send(x,p,t) p sends x during t; pos(A,p,t) partial sum A on p at the start of t; mv(A,p,t) it moves
during t; D(o,t) op o ran before t (order encoding); B1(t)/B2(t) cycle t is after barrier 1/2.
Cardinality: pysat.card sequential counters.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from pysat.card import CardEnc, EncType

from ringproof.model.bitlevel.problem import BitProblem
from ringproof.model.ring.rules import assume
from ringproof.proofs.search.rotation import invariance_clauses

TRUE, FALSE = 1, -1

# The clauses are written for these rules; tests/test_rules.py pins them to the checker that reads RULES.
assume("the bit-level CNF (proofs/search/cnf.py)", hop=1, link_capacity=1, ops_per_cycle=1, persists=True)


class Cnf:
    """Clause store that folds the constants TRUE/FALSE away as clauses are added."""

    def __init__(self):
        self.nv = 1
        self.clauses: list[list[int]] = [[TRUE]]
        self.conflict = False

    def new(self) -> int:
        self.nv += 1
        return self.nv

    def add(self, lits) -> None:
        out = []
        for x in lits:
            if x == TRUE:
                return
            if x != FALSE:
                out.append(x)
        if not out:
            self.conflict = True
        self.clauses.append(out)

    def amo(self, lits) -> None:
        lits = [x for x in lits if x != FALSE]
        if lits.count(TRUE) > 1:
            self.conflict = True
            return
        if TRUE in lits:
            for x in lits:
                if x != TRUE:
                    self.add([-x])
            return
        if len(lits) <= 5:
            for a in range(len(lits)):
                for b in range(a + 1, len(lits)):
                    self.clauses.append([-lits[a], -lits[b]])
            return
        enc = CardEnc.atmost(lits=lits, bound=1, top_id=self.nv, encoding=EncType.seqcounter)
        self.nv = max(self.nv, enc.nv)
        self.clauses.extend(enc.clauses)


@dataclass(frozen=True)
class EncodingModes:
    """Which runs of T cycles an `Encoding` admits, every default written once.

    Pin, rotation and band remove valid runs: for witness search only (their UNSAT proves nothing).
    """

    barriers: str = "global"        # the machine's barrier mode (global, pe, none); a split needs global
    split: tuple | None = None      # (L1, L2, L3) fixes the phase lengths and adds busy-slot clauses where a
    #                                 phase's op count fills it; None leaves the barriers as variables
    cube: dict | None = None        # {op key: PE}: each named op runs on its PE (one cube of cubes.py)
    fixed: tuple | None = None      # (ops {op key: (p, t)}, sends {(t, p, datum)}): the bounded check of a run
    compact: bool = True            # with fixed: the memory only at the run's points (`_memory_of_run`);
    #                                 False keeps one variable per datum, PE and cycle, as the search does
    pin: dict | None = None         # {op key: (p, t)} for some ops only (staged witness search)
    rotation: int | None = None     # g: only runs equal to their rotation by g (proofs/search/rotation.py)
    band: dict | None = None        # {phase: (lo, hi)} (pe and none barriers): each phase's ops in those cycles


class Encoding:
    """CNF of "the instance runs in T cycles", among the runs `modes` admits."""

    def __init__(self, prob: BitProblem, T: int, modes: EncodingModes = EncodingModes()):
        self.prob, self.T, self.m = prob, T, prob.m
        self.split, self.rotation, self.barriers = modes.split, modes.rotation, modes.barriers
        self.compact = modes.compact and modes.fixed is not None   # a fixed run's memory only at its points
        self.band = modes.band or {}
        self.pin = modes.pin or {}  # op key -> (p, t) for a subset of ops (staged witness search)
        self.cube = modes.cube or {}  # op key -> the PE it runs on
        self.cnf = Cnf()
        self.reason = ""
        self.fixed_ops, self.fixed_sends = modes.fixed if modes.fixed else (None, None)
        self.win = self._windows()
        self.opv: list[dict] = []
        self.D: list[list[int]] = []
        self.at: dict = {}
        self.send: dict = {}
        self.mv: dict = {}
        self.prod: dict = {}
        self._points: dict = {}  # compact fixed run: (x, p) -> (cycles, at literals), see _memory_of_run
        if not self.cnf.conflict:
            self._build()
        if self.cnf.conflict:  # handed to a solver anyway, the CNF says UNSAT (not the [TRUE] of no clause)
            self.cnf.clauses.append([FALSE])

    # ---- windows -------------------------------------------------------------------------------
    def _windows(self) -> list[tuple[int, int]]:
        prob, T = self.prob, self.T
        rows = prob.row_eacs()
        if self.split:
            L1, L2, _ = self.split
            bounds = {1: (0, L1 - 1), 2: (L1, L1 + L2 - 1), 3: (L1 + L2, T - 1)}
        elif self.barriers == "global":
            m1, m2, m3 = prob.phase_minimum(spread=False) if self.fixed_ops is None else (1, 1, 1)
            bounds = {1: (0, T - m2 - m3 - 1), 2: (m1, T - m3 - 1), 3: (m1 + m2, T - 1)}
        else:
            bounds = None
        free = self._operand_windows() if bounds is None else {}
        out = []
        for s in prob.ops:
            if bounds is None:
                lo, hi = free[s.key]
            else:
                lo, hi = bounds[s.phase]
            if bounds is not None and s.key[0] == "EAC":
                hi -= 1  # the row's DIVs come later in the same phase
            elif bounds is not None and s.key[0] == "DIV":
                lo += rows[s.key[1]]  # after the row's EACs, each in its own cycle
            if self.fixed_ops is not None:
                where = self.fixed_ops.get(s.key)
                lo = hi = where[1] if where else -1
            elif s.key in self.pin:
                t = self.pin[s.key][1]
                lo, hi = (t, t) if lo <= t <= hi else (0, -1)
            if lo > hi or lo < 0 or hi >= T:
                self.cnf.conflict = True
            out.append((lo, hi))
        return out

    def _operand_windows(self) -> dict[tuple, tuple[int, int]]:
        """Op windows when only operands order the ops (pe and none barriers; lemma L5's chain), inside
        the cycles (lo_k, hi_k) of each phase k (the band; the whole run without one): w' takes d
        cycles; row i's r_i EACs into s_i run one per cycle, then its DIVs; each y_i[l] takes r_i
        MAC3s, one per cycle, the first after a DIV of row i. So a row's EACs start at max(d, lo_2) and
        end r_i + 1 cycles before hi_3, its DIVs start r_i cycles after its EACs can, a MAC3 one after
        them, and a MAC1 ends before the earliest-ending EAC reading its w'."""
        prob, T, d = self.prob, self.T, self.prob.d
        (lo1, hi1), (lo2, hi2), (lo3, hi3) = (self.band.get(k, (0, T - 1)) for k in (1, 2, 3))
        rows = prob.row_eacs()
        last_use: dict = {}
        out = {}
        for s in prob.ops:
            kind, i = s.key[0], s.key[1]
            eac = (max(d, lo2), min(hi2 - 1, hi3 - 1 - rows[i]))
            if kind == "EAC":
                out[s.key] = eac
                last_use[s.reads[0]] = min(last_use.get(s.reads[0], T), eac[1] - 1)
            elif kind == "DIV":
                out[s.key] = (eac[0] + rows[i], min(hi2, hi3 - 1))
            elif kind == "MAC3":
                out[s.key] = (max(lo3, eac[0] + rows[i] + 1), hi3)
        for s in prob.ops:
            if s.key[0] == "MAC1":
                out[s.key] = (lo1, min(hi1, last_use.get(s.acc, T - 4)))
        return out

    # ---- variables -----------------------------------------------------------------------------
    def _op_vars(self) -> None:
        cnf, m = self.cnf, self.m
        for k, s in enumerate(self.prob.ops):
            lo, hi = self.win[k]
            fixed = self.fixed_ops if self.fixed_ops is not None else self.pin
            if s.key in fixed:
                p, t = fixed[s.key]
                self.opv.append({(q, t): (TRUE if q == p else FALSE) for q in range(m)})
                continue
            pes = [self.cube[s.key]] if s.key in self.cube else range(m)
            v = {(p, t): cnf.new() for t in range(lo, hi + 1) for p in pes}
            self.opv.append(v)
            cnf.add(list(v.values()))
            cnf.amo(list(v.values()))

    def op(self, k: int, p: int, t: int) -> int:
        return self.opv[k].get((p, t), FALSE)

    def _order(self) -> None:
        """D[k][t]: op k ran in a cycle < t, for t in 0..T."""
        cnf, m = self.cnf, self.m
        for k in range(len(self.prob.ops)):
            lo, hi = self.win[k]
            row = [FALSE] * (lo + 1) + [cnf.new() for _ in range(lo + 1, hi + 1)] + [TRUE] * (self.T - hi)
            for t in range(lo, hi + 1):
                here = [self.op(k, p, t) for p in range(m)]
                cnf.add([-row[t + 1], row[t]] + here)
                cnf.add([-row[t], row[t + 1]])
                for x in here:
                    cnf.add([-x, row[t + 1]])
            self.D.append(row)

    def _break_feature_symmetry(self) -> None:
        """Relabelling a feature index by any permutation maps runs to runs when no input's placement
        depends on it. Plain and masked have two such indices: l of q, k (phase 1) and l of v, y
        (phase 3); symmetric has one, as x serves as q, k and v. So w'_00's MAC1 ops may be assumed
        to run in the order l = 0, 1, ... (they are in distinct cycles) and, for the v index, the
        MAC3(0,0,l) ops in the order of their slots (cycle, then PE; distinct, as one op runs per
        slot). A pin of phase-1 ops drops the first and keeps the second, which is only added then: it
        speeds up the pinned masked n=5 CNFs but slows the full masked n=4 one (docs/bitlevel.md §4)."""
        prob = self.prob
        if self.fixed_ops is not None:
            return

        def free(names):
            return all(prob.initial[x] == prob.initial[x[:2] + (0,)] for x in prob.inputs if x[0] in names)

        sym = prob.variant == "symmetric"
        if not self.pin and free(("x",) if sym else ("q", "k")):
            for a, b in self._chain("MAC1"):  # one accumulator w'_00: increasing cycles
                for t in range(self.T):
                    self.cnf.add([-self.D[b][t + 1], self.D[a][t]])
        if not sym and (self.pin or self.band) and all(k[0] != "MAC3" for k in self.pin) and free(("v",)):
            for a, b in self._chain("MAC3"):  # b's slot (t, p) after a's: a ran before t or on a lower PE
                for (p, t), x in self.opv[b].items():
                    self.cnf.add([-x, self.D[a][t]] + [self.op(a, q, t) for q in range(p)])

    def _chain(self, kind: str) -> list[tuple[int, int]]:
        """Consecutive pairs of the ops (kind, 0, 0, l), l = 0..d-1 (none if the problem lacks them)."""
        ops = [self.prob.index.get((kind, 0, 0, l)) for l in range(self.prob.d)]
        return [] if None in ops else list(zip(ops, ops[1:]))

    def _barriers(self) -> None:
        """Barrier variables B1(t), B2(t) (cycle t after barrier 1 / 2), one pair for the whole ring
        (global) or one per PE (pe); none without barriers, or when a split fixes the phases."""
        if self.split or self.barriers == "none":
            return
        cnf, T, m = self.cnf, self.T, self.m
        for scope in ([range(m)] if self.barriers == "global" else [[p] for p in range(m)]):
            b1 = [cnf.new() for _ in range(T)]
            b2 = [cnf.new() for _ in range(T)]
            for t in range(T - 1):
                cnf.add([-b1[t], b1[t + 1]])
                cnf.add([-b2[t], b2[t + 1]])
            for t in range(T):
                cnf.add([-b2[t], b1[t]])
            for k, s in enumerate(self.prob.ops):
                lo, hi = self.win[k]
                for t in range(lo, hi + 1):
                    for p in scope:
                        x = self.op(k, p, t)
                        if s.phase == 1:
                            cnf.add([-x, -b1[t]])
                        elif s.phase == 2:
                            cnf.add([-x, b1[t]])
                            cnf.add([-x, -b2[t]])
                        else:
                            cnf.add([-x, b2[t]])

    def _slots(self) -> None:
        cnf, m, prob = self.cnf, self.m, self.prob
        per_slot: dict = {}
        per_phase_slot: dict = {}
        for k, s in enumerate(prob.ops):
            for (p, t), x in self.opv[k].items():
                per_slot.setdefault((p, t), []).append(x)
                per_phase_slot.setdefault((s.phase, p, t), []).append(x)
        for lits in per_slot.values():
            cnf.amo(lits)
        if self.split is None and self.fixed_ops is None and len(prob.ops) == m * self.T:
            for p in range(m):  # busy-slot clauses without phases: the ops fill every (p, t)
                for t in range(self.T):
                    cnf.add(per_slot.get((p, t), []))
        if self.split and self.fixed_ops is None:
            start = 0
            for ph, L in enumerate(self.split, start=1):
                if prob.count(ph) == m * L:  # busy-slot clauses: every (p, t) of the phase runs an op
                    for t in range(start, start + L):
                        for p in range(m):
                            cnf.add(per_phase_slot.get((ph, p, t), []))
                start += L

    # ---- data ----------------------------------------------------------------------------------
    def _data_ranges(self) -> dict[tuple, tuple[int, int]]:
        """datum -> (first cycle it can be produced or -1 for inputs, last cycle it is read)."""
        prob = self.prob
        first: dict = {x: -1 for x in prob.inputs}
        last: dict = {}
        for k, s in enumerate(prob.ops):
            lo, hi = self.win[k]
            for x in s.reads:
                last[x] = max(last.get(x, -1), hi)
            if s.out:
                first[s.out] = lo
        for a, ks in prob.acc_ops.items():
            first[a] = max(self.win[k][0] for k in ks)
        for t, p, x in self.fixed_sends or ():
            if x not in first or not (0 <= t < self.T and 0 <= p < self.m):
                self.cnf.conflict = True
                self.reason = f"send of {x!r} by PE {p} in cycle {t} names no datum, PE or cycle of the run"
            else:
                last[x] = max(last.get(x, -1), t + 1)
        return {x: (first[x], last[x]) for x in last}

    def _accumulators(self) -> None:
        cnf, m = self.cnf, self.m
        consumed = self._ranges
        for a, ks in self.prob.acc_ops.items():
            lo = min(self.win[k][0] for k in ks)
            hi = max(self.win[k][1] for k in ks)
            here = {(p, t): [self.op(k, p, t) for k in ks] for p in range(m) for t in range(lo, hi + 1)}
            if len(ks) == 1:
                if a in consumed:
                    for (p, t), xs in here.items():
                        self.prod[(a, p, t)] = xs[0]
                continue
            for t in range(lo, hi + 1):  # one op of a per cycle
                cnf.amo([x for p in range(m) for x in here[(p, t)]])
            span = range(lo, hi + 2)  # outside it every op of a is still to run (before) or has run
            started = {t: self._or([self.D[k][t] for k in ks]) for t in span}
            done = {t: self._and([self.D[k][t] for k in ks]) for t in span}
            pos = {(p, t): cnf.new() for t in range(lo + 1, hi + 1) for p in range(m)}
            P = lambda p, t: pos.get((p % m, t), FALSE)  # noqa: E731
            mv = {(p, t): cnf.new() for t in range(lo, hi) for p in range(m)} if m > 1 else {}
            M = lambda p, t: mv.get((p % m, t), FALSE)  # noqa: E731
            for t in range(lo + 1, hi + 1):
                cnf.amo([P(p, t) for p in range(m)])
                for p in range(m):
                    cnf.add([-P(p, t), started[t]])
                    cnf.add([-P(p, t), -done[t]])
                    cnf.add([-P(p, t), P(p, t - 1)] + here[(p, t - 1)] + [M(p - 1, t - 1)])
            for (p, t), xs in here.items():
                for x in xs:
                    cnf.add([-x, -started[t], P(p, t)])
                if t < hi:
                    for src in [P(p, t)] + xs:
                        cnf.add([-src, done[t + 1], P(p, t + 1), M(p, t)])
                    cnf.add([-M(p, t), P(p, t)] + xs)
                    cnf.add([-M(p, t), P(p + 1, t + 1)])
                if a in consumed:
                    pr = cnf.new()
                    cnf.add([-pr, done[t + 1]])
                    cnf.add([-pr] + xs)
                    for x in xs:
                        cnf.add([-x, -done[t + 1], pr])
                    self.prod[(a, p, t)] = pr
            for (p, t), x in mv.items():
                self.mv[(a, p, t)] = x

    def _or(self, lits: list[int]) -> int:
        lits = [x for x in lits if x != FALSE]
        if TRUE in lits or not lits:
            return TRUE if lits else FALSE
        if len(lits) == 1:
            return lits[0]
        v = self.cnf.new()
        self.cnf.add([-v] + lits)
        for x in lits:
            self.cnf.add([-x, v])
        return v

    def _and(self, lits: list[int]) -> int:
        return -self._or([-x for x in lits])

    def _memory(self) -> None:
        cnf, prob = self.cnf, self.prob
        for k, s in enumerate(prob.ops):
            if s.out:
                for (p, t), x in self.opv[k].items():
                    self.prod[(s.out, p, t)] = x
        if self.compact:
            self._memory_of_run()
        else:
            self._memory_per_cycle()
        for k, s in enumerate(prob.ops):
            for (p, t), v in self.opv[k].items():
                for x in s.reads:
                    cnf.add([-v, self.holds(x, p, t)])

    def holds(self, x, p: int, t: int) -> int:
        """The literal of at(x, p, t)."""
        if not self.compact:
            return self.at[(x, p, t)]
        times, lits = self._points.get((x, p), ((0,), (FALSE,)))
        return lits[bisect_right(times, t) - 1]

    def _memory_per_cycle(self) -> None:
        """at(x, p, t) for every cycle up to the datum's last use."""
        cnf, m, prob = self.cnf, self.m, self.prob
        for x, (first, last) in self._ranges.items():
            init = prob.initial.get(x, frozenset())
            at = {}
            for p in range(m):
                at[(p, 0)] = TRUE if p in init else FALSE
                for t in range(1, last + 1):
                    at[(p, t)] = cnf.new() if t > first else FALSE
            snd = {}
            if m > 1:
                for p in range(m):
                    for t in range(max(first, 0), last):
                        snd[(p, t)] = self._fixed_send(x, p, t) if self.fixed_sends is not None else cnf.new()
            for p in range(m):
                q = (p - 1) % m
                for t in range(last):
                    prod = self.prod.get((x, p, t), FALSE)
                    cnf.add([-at[(p, t)], at[(p, t + 1)]])
                    cnf.add([-prod, at[(p, t + 1)]])
                    cnf.add([-at[(p, t + 1)], at[(p, t)], prod, snd.get((q, t), FALSE)])
                    s = snd.get((p, t), FALSE)
                    cnf.add([-s, at[(p, t)], prod])
                    cnf.add([-s, at[((p + 1) % m, t + 1)]])
            for key, v in at.items():
                self.at[(x,) + key] = v
            for key, v in snd.items():
                self.send[(x,) + key] = v

    def _memory_of_run(self) -> None:
        """at(x, p, t) of a fixed run, only at its points: cycle 0, each cycle after a possible
        production of x on p or arrival of x from p − 1, and each cycle where p reads or sends x.
        Between two points nothing can bring x to p, so the per-cycle variables there equal the
        point before (persistence and the frame rule of `_memory_per_cycle` force it); dropping
        them leaves the same rules over fewer variables. A datum nothing can bring to p is absent
        there (FALSE), as unit propagation of the per-cycle encoding derives."""
        cnf, m, prob = self.cnf, self.m, self.prob
        sends: dict = {}          # (x, p) -> {t: literal of send(x, p, t)}, the run's listed sends
        if m > 1:
            for t, p, x in self.fixed_sends:
                if x in self._ranges:
                    lit = cnf.new() if (x, p, t) in self.mv else TRUE   # an accumulator's: move or copy
                    sends.setdefault((x, p), {})[t] = lit
                    self.send[(x, p, t)] = lit
        prods: dict = {}          # (x, p) -> {t: literal of prod(x, p, t)}
        for (x, p, t), lit in self.prod.items():
            if lit != FALSE and x in self._ranges:
                prods.setdefault((x, p), {})[t] = lit
        reads: dict = {}          # (x, p) -> cycles where p reads x
        for k, s in enumerate(prob.ops):
            for (p, t), v in self.opv[k].items():
                if v != FALSE:
                    for x in s.reads:
                        reads.setdefault((x, p), set()).add(t)
        for x, (first, last) in self._ranges.items():
            init = prob.initial.get(x, frozenset())
            for p in range(m):
                q = (p - 1) % m
                made, came, sent = prods.get((x, p), {}), sends.get((x, q), {}), sends.get((x, p), {})
                times = {0} | {t + 1 for t in made} | {t + 1 for t in came} | set(sent) | reads.get((x, p), set())
                times = sorted(t for t in times if t <= last)
                lits = [TRUE if p in init else FALSE] + [cnf.new() if t > first else FALSE for t in times[1:]]
                for i in range(1, len(times)):
                    t = times[i]
                    cnf.add([-lits[i - 1], lits[i]])
                    cnf.add([-lits[i], lits[i - 1], made.get(t - 1, FALSE), came.get(t - 1, FALSE)])
                self._points[(x, p)] = (times, lits)
        for (x, p), sent in sends.items():
            for t, s in sent.items():
                cnf.add([-s, self.holds(x, p, t), self.prod.get((x, p, t), FALSE)])
                cnf.add([-s, self.holds(x, (p + 1) % m, t + 1)])
        for (x, p), made in prods.items():
            for t, lit in made.items():
                if t < self._ranges[x][1]:
                    cnf.add([-lit, self.holds(x, p, t + 1)])

    def _fixed_send(self, x, p, t) -> int:
        if (x, p, t) in self.mv:  # listed: a move or a copy, decided in _links
            return self.cnf.new()
        return TRUE if (t, p, x) in self.fixed_sends else FALSE

    def _links(self) -> None:
        per: dict = {}
        for (x, p, t), v in list(self.send.items()) + list(self.mv.items()):
            per.setdefault((p, t), []).append(v)
        for lits in per.values():
            self.cnf.amo(lits)
        if self.fixed_sends is not None:
            for (a, p, t), v in self.mv.items():  # a listed send of an accumulator: a move or a copy
                copy = self.send.get((a, p, t), FALSE)
                if (t, p, a) in self.fixed_sends:
                    self.cnf.add([v, copy])
                else:
                    self.cnf.add([-v])
                    self.cnf.add([-copy])

    def _build(self) -> None:
        self._op_vars()
        self._order()
        self._barriers()
        self._break_feature_symmetry()
        self._slots()
        self._ranges = self._data_ranges()
        self._accumulators()
        self._memory()
        self._links()
        if self.rotation:
            self.cnf.clauses.extend(invariance_clauses(self, self.rotation))

    def forbid(self, place: dict) -> None:
        """Exclude one placement {op key: (p, t)} of this CNF's ops: some op must run elsewhere."""
        self.cnf.add([-self.op(self.prob.index[key], p, t) for key, (p, t) in place.items()])

    def blocking(self, model: list[int]) -> list[int]:
        """The clause excluding the op placement of a model (pysat's signed list)."""
        ops = {v for vs in self.opv for v in vs.values() if v not in (TRUE, FALSE)}
        return [-x for x in model if x > 0 and x in ops]

    # ---- decoding ------------------------------------------------------------------------------
    def decode(self, model: set[int]):
        """Op placement {op key: (p, t)} and sends [(t, p, datum)] of a satisfying assignment."""
        val = lambda v: v == TRUE or v in model  # noqa: E731
        place = {}
        for k, s in enumerate(self.prob.ops):
            for (p, t), v in self.opv[k].items():
                if val(v):
                    place[s.key] = (p, t)
        sends = [(t, p, x) for (x, p, t), v in list(self.send.items()) + list(self.mv.items()) if val(v)]
        return place, sorted(sends)
