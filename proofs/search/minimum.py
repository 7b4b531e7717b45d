"""The optimal-schedule search (the paper's ES, docs/bitlevel.md): the minimum cycles of any run.

`search` decides horizons T upward from the proven lemma bound; each T is split into phase lengths
(L1, L2, L3), each split decided in stages by `_Splitter`. A SAT answer is a witness checked by the
independent checker; T is refuted only when every split is UNSAT.
"""

from __future__ import annotations

import time

from ringproof.model.bitlevel.check import check_run
from ringproof.model.bitlevel.problem import Problem
from ringproof.model.bitlevel.types import Attempt, Run, SearchResult, Verdict
from ringproof.proofs.search.cnf import Encoding
from ringproof.proofs.search.portfolio import DEFAULT_SOLVER, solve
from ringproof.proofs.search.rotation import rotation_step
from ringproof.proofs.search.sat_check import to_run


def _splits(mins: tuple[int, int, int], T: int):
    """Every (L1, L2, L3) with Lk >= mins[k] summing to T, phase-2 slack first."""
    slack = T - sum(mins)
    return [(mins[0] + a, mins[1] + b, mins[2] + slack - a - b)
            for b in range(slack, -1, -1) for a in range(slack - b + 1)]


class _Splitter:
    """Decides one split (L1, L2, L3) of a horizon T, in stages:

    1. the full CNF with a short budget, if it has at most QUICK_VARS variables;
    2. plain and symmetric only, when a rotation step g exists (model/bitlevel_rotation.py): the
       phase-1 relaxation and then the full CNF with its phase 1 pinned, both restricted to runs
       invariant under rotation by g — SAT is a witness, UNSAT proves nothing;
    3. the phase-1 relaxation (MAC1 ops only, L1 cycles): UNSAT refutes the split, since any run's
       first L1 cycles solve it; SAT gives a phase-1 placement to pin;
    4. the full CNF with that phase-1 placement pinned: SAT is a witness (UNSAT proves nothing);
    5. the full CNF with whatever time is left.

    Stages 2 and 4 try up to PINS placements: when a pinned CNF fails (UNSAT, or UNKNOWN after a
    third of the time left), its placement is forbidden and the relaxation asked for another, as
    pinned run times vary several-fold with the placement. Relaxations get half the time left, the
    last pinned try all of it.
    """

    QUICK, QUICK_VARS = 30.0, 60_000  # the short full call: measured to pay off on small CNFs only
    PINS, PIN_SHARE = 4, 1 / 3

    def __init__(self, prob: Problem, solver: str, deadline: float | None, progress):
        self.prob, self.solver, self.deadline, self.progress = prob, solver, deadline, progress
        self.attempts: list[Attempt] = []
        self.pins: dict[tuple, list] = {}  # (L1, rotation) -> [(relaxation verdict, placement or None)]
        self.rotation = rotation_step(prob)

    def _left(self, share: float = 1.0, cap: float | None = None) -> float | None:
        if self.deadline is None:
            return cap
        left = (self.deadline - time.perf_counter()) * share
        return left if cap is None else min(cap, left)

    def _call(self, enc: Encoding, T: int, split, stage: str, budget):
        cnf = enc.cnf
        if cnf.conflict:
            verdict, model, secs = Verdict.UNSAT, None, 0.0
        else:
            verdict, model, secs = solve(cnf.clauses, cnf.nv, self.solver, budget)
        self.attempts.append(Attempt(T, split, verdict, secs, cnf.nv, len(cnf.clauses), stage))
        if self.progress:
            self.progress(self.attempts[-1])
        return verdict, model

    def _full(self, T, split, budget, pin=None, rotation=None, stage="full"):
        enc = Encoding(self.prob, T, split=split, pin=pin, rotation=rotation)
        verdict, model = self._call(enc, T, split, stage, budget)
        return verdict, (to_run(self.prob, T, *enc.decode(model)) if verdict is Verdict.SAT else None)

    def _pin(self, L1: int, rotation: int | None, k: int) -> tuple[Verdict, dict | None]:
        """The k-th phase-1 placement of L1 cycles (cached): the relaxation with placements 0..k-1
        forbidden, optionally rotation-invariant. Its verdict refutes phase 1 only for k = 0."""
        found = self.pins.setdefault((L1, rotation), [])
        if k < len(found):
            return found[k]
        if k > len(found) or (found and found[-1][1] is None):
            return Verdict.UNKNOWN, None
        enc = Encoding(self.prob.phase_one(), L1, split=(L1, 0, 0), rotation=rotation)
        for _, place in found:
            enc.forbid(place)
        stage = "phase-1 relaxation" + (", rotation-invariant" if rotation else "")
        verdict, model = self._call(enc, L1, (L1, 0, 0), stage, self._left(0.5))
        found.append((verdict, enc.decode(model)[0] if verdict is Verdict.SAT else None))
        return found[-1]

    def decide(self, T: int, split: tuple[int, int, int]) -> tuple[Verdict, Run | None]:
        enc = Encoding(self.prob, T, split=split)
        if enc.cnf.nv <= self.QUICK_VARS:
            verdict, model = self._call(enc, T, split, "full", self._left(0.5, self.QUICK))
            if verdict is not Verdict.UNKNOWN:
                return verdict, (to_run(self.prob, T, *enc.decode(model)) if verdict is Verdict.SAT else None)
        for rotation in ([self.rotation] if self.rotation else []) + [None]:
            stage = "phase 1 pinned" + (", rotation-invariant" if rotation else "")
            for k in range(self.PINS):
                verdict, pin = self._pin(split[0], rotation, k)
                if verdict is Verdict.UNSAT and k == 0 and rotation is None:
                    return Verdict.UNSAT, None
                if pin is None:
                    break
                last = rotation is None and k == self.PINS - 1
                verdict, run = self._full(T, split, self._left(1.0 if last else self.PIN_SHARE), pin, rotation,
                                          stage)
                if verdict is Verdict.SAT:
                    return verdict, run
        return self._full(T, split, self._left())


def search(variant: str, n: int, m: int, d: int | None = None, max_T: int | None = None,
           timeout: float | None = None, solver: str = DEFAULT_SOLVER, placement: dict | None = None,
           progress=None, lemmas: bool = True) -> SearchResult:
    """Minimum cycles of `variant` attention on m PEs.

    T rises from the lemma bound L1 + L2b + L3 (with `lemmas=False`, from the slot-counting bound
    L1 + L2a + L3, so that the solver refutes the T in between itself); each T is split into every
    admissible phase-length triple (L1, L2, L3) and is SAT iff some split is (each split decided by
    `_Splitter`). A split left undecided leaves T unresolved; the search then goes on looking for a
    witness at larger T, so a timeout still reports the best schedule found and the largest T proven
    impossible. Every witness is replayed by `check_run`; one it rejects raises, as the encoding
    would then be wrong.
    """
    start = time.perf_counter()
    prob = Problem(variant, n, m, d, placement)
    counting = prob.phase_minimum(spread=False)
    strong = prob.phase_minimum()
    mins = strong if lemmas else counting
    lb = sum(mins)
    max_T = max_T if max_T is not None else sum(strong) + 2 * prob.n + 4
    splitter = _Splitter(prob, solver, None if timeout is None else start + timeout, progress)
    # no split sums to less than lb: the T below are refuted without a solver call
    unsat_below, unsat_seconds = lb - 1, 0.0
    unsat_by = "slot counting" if lb == sum(counting) else "lemma L2b"
    resolved = True  # every T so far proven UNSAT
    for T in range(lb, max_T + 1):
        t_start, found, unknown = time.perf_counter(), None, False
        for split in _splits(mins, T):
            verdict, run = splitter.decide(T, split)
            if verdict is Verdict.SAT:
                found = run
                break
            unknown |= verdict is Verdict.UNKNOWN
        if found is not None:
            found = Run(found.variant, found.n, found.m, found.d, found.T, found.ops, found.sends, placement)
            problems = check_run(found)
            if problems:
                raise AssertionError(f"encoding produced an invalid schedule: {problems[:3]}")
            return SearchResult(variant, n, m, prob.d, T if resolved else None, unsat_below, unsat_seconds, T,
                                time.perf_counter() - start, found, sum(strong), tuple(splitter.attempts),
                                "" if resolved else f"T={unsat_below + 1} unresolved (timeout)", unsat_by,
                                lb - 1)
        if unknown:
            resolved = False
        elif resolved:
            unsat_below, unsat_seconds, unsat_by = T, time.perf_counter() - t_start, "SAT solver"
        if timeout is not None and time.perf_counter() - start >= timeout:
            break
    reason = "timeout" if timeout is not None and time.perf_counter() - start >= timeout else \
        f"no schedule up to max_T={max_T}"
    return SearchResult(variant, n, m, prob.d, None, unsat_below, unsat_seconds, None,
                        time.perf_counter() - start, None, sum(strong), tuple(splitter.attempts), reason,
                        unsat_by, lb - 1)
