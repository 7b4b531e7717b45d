"""The optimal-schedule search (the paper's ES, docs/bitlevel.md): the minimum cycles of any run.

`search` decides horizons T upward from the proven lemma bound. Each T is split into cubes
(cubes.py: the PEs of a few decisive ops; one cube at depth 0) that run as independent tasks
(engine.py: in this process or on Dask); in each cube every phase split (L1, L2, L3) is decided in
stages by `_Splitter`. A SAT answer is a witness checked by the independent checker; T is refuted
only when every cube is UNSAT. Finished cubes are recorded in a state file (state.py) when asked.
"""

from __future__ import annotations

import dataclasses
import os
import time

from ringproof.errors import BadInput
from ringproof.model.bitlevel.check import check_run
from ringproof.model.bitlevel.problem import BitProblem
from ringproof.model.bitlevel.types import BARRIERS, VARIANTS, Attempt, Run, SearchResult, SatVerdict
from ringproof.proofs.search.cnf import Encoding, EncodingModes
from ringproof.proofs.search.cubes import Cube, check_coverage, cubes, split_cover
from ringproof.proofs.search.engine import InProcess, engine
from ringproof.proofs.search.limits import check_search
from ringproof.proofs.search.options import DEFAULTS, SearchOptions
from ringproof.proofs.search.portfolio import first_witness, models, solve
from ringproof.proofs.search.rotation import rotation_step
from ringproof.proofs.search.sat_check import to_run
from ringproof.proofs.search.state import SearchState


def _splits(mins: tuple[int, int, int], T: int):
    """Every (L1, L2, L3) with Lk >= mins[k] summing to T, phase-2 slack first."""
    slack = T - sum(mins)
    return [(mins[0] + a, mins[1] + b, mins[2] + slack - a - b)
            for b in range(slack, -1, -1) for a in range(slack - b + 1)]


class _Splitter:
    """Decides one split (L1, L2, L3) of a horizon T, in stages:

    1. the full CNF with a short budget, if it has at most QUICK_VARS variables;
    2. plain and symmetric only, when a rotation step g exists (rotation.py): the
       phase-1 relaxation and then the full CNF with its phase 1 pinned, both restricted to runs
       invariant under rotation by g — SAT is a witness, UNSAT proves nothing;
    3. the phase-1 relaxation (MAC1 ops only, L1 cycles): UNSAT refutes the split, since any run's
       first L1 cycles solve it; SAT gives a phase-1 placement to pin;
    4. the full CNF with that phase-1 placement pinned: SAT is a witness (UNSAT proves nothing);
    5. the full CNF with whatever time is left.

    Stages 2 and 4 try up to PINS placements, as pinned run times vary several-fold with the
    placement: one relaxation call returns up to RACE placements (the solver's next models, each
    excluding the last), which are raced, one process each, for a witness; when they fail (UNSAT, or
    UNKNOWN after a third of the time left), they are forbidden and the relaxation asked for more.
    Relaxations get half the time left, the last pinned try all of it, the others a third of it but
    at most PIN_CAP seconds (masked n = 5: the first placements can stay undecided long after a
    later one gave the witness, docs/bitlevel.md §9).
    PINS, PIN_SHARE, PIN_CAP and RACE change only how fast a witness is found, never a verdict.
    `width` is the number of solver processes one cube may run at once (its share of the cores):
    placements raced and portfolio solvers are capped by it.
    """

    QUICK, QUICK_VARS = 30.0, 60_000  # the short full call, tried on small CNFs only (docs/bitlevel.md §4)
    PINS, PIN_SHARE, PIN_CAP, RACE = 4, 1 / 3, 60.0, 2

    def __init__(self, prob: BitProblem, solver: str, deadline: float | None, progress, barriers: str = "global",
                 cube: dict | None = None, width: int = RACE):
        self.prob, self.solver, self.deadline, self.progress = prob, solver, deadline, progress
        self.barriers, self.cube, self.width = barriers, cube or {}, max(1, width)
        self.race = min(self.RACE, self.width)
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
            verdict, model, secs = SatVerdict.UNSAT, None, 0.0
        else:
            verdict, model, secs = solve(cnf.clauses, cnf.nv, self.solver, budget, self.width)
        self._record(T, split, stage, verdict, secs, enc)
        return verdict, model

    def _record(self, T: int, split, stage: str, verdict: SatVerdict, secs: float, enc: Encoding) -> None:
        self.attempts.append(Attempt(T, split, verdict, secs, enc.cnf.nv, len(enc.cnf.clauses), stage))
        if self.progress:
            self.progress(self.attempts[-1])

    def _out_of_time(self) -> bool:
        """No time left: a CNF is not even built (building a large one takes seconds)."""
        return self.deadline is not None and self.deadline <= time.perf_counter()

    def _full(self, T, split, budget, stage="full", band=None):
        if self._out_of_time():
            return SatVerdict.UNKNOWN, None
        enc = Encoding(self.prob, T, EncodingModes(split=split, barriers=self.barriers, cube=self.cube, band=band))
        verdict, model = self._call(enc, T, split, stage, budget)
        return verdict, self._run(enc, T, model) if verdict is SatVerdict.SAT else None

    def _run(self, enc: Encoding, T: int, model) -> Run:
        return to_run(self.prob, T, *enc.decode(model), barriers=self.barriers)

    def _pin(self, L1: int, rotation: int | None, k: int) -> tuple[SatVerdict, dict | None]:
        """The k-th phase-1 placement of L1 cycles (cached): the relaxation with placements 0..k-1
        forbidden, optionally rotation-invariant. Its verdict refutes phase 1 only for k = 0."""
        found = self.pins.setdefault((L1, rotation), [])
        if k < len(found):
            return found[k]
        if k > len(found) or (found and found[-1][1] is None) or self._out_of_time():
            return SatVerdict.UNKNOWN, None
        one = self.prob.phase_one()
        enc = Encoding(one, L1, EncodingModes(split=(L1, 0, 0), rotation=rotation,
                                              cube={k: p for k, p in self.cube.items() if k in one.index}))
        for _, place in found:
            enc.forbid(place)
        stage = "phase-1 relaxation" + (", rotation-invariant" if rotation else "")
        if enc.cnf.conflict:
            verdict, places, secs = SatVerdict.UNSAT, [], 0.0
        else:
            verdict, places, secs = models(enc.cnf.clauses, enc.cnf.nv, enc.blocking, self.race, self.solver,
                                           self._left(0.5), width=self.width)
        self._record(L1, (L1, 0, 0), stage, verdict, secs, enc)
        found.extend((SatVerdict.SAT, enc.decode(m)[0]) for m in places)
        if not places:
            found.append((verdict, None))
        return found[k]

    def _pinned(self, T: int, split, pins: list[dict], budget, rotation, stage) -> tuple[SatVerdict, Run | None]:
        """The full CNF with each phase-1 placement pinned, raced for a witness (one process each)."""
        if self._out_of_time():
            return SatVerdict.UNKNOWN, None
        encs = [Encoding(self.prob, T, EncodingModes(split=split, pin=pin, rotation=rotation, cube=self.cube))
                for pin in pins]
        live = [e for e in encs if not e.cnf.conflict] or encs[:1]
        if len(live) == 1 or self.solver == "z3":
            verdict, model = self._call(live[0], T, split, stage, budget)
            return verdict, self._run(live[0], T, model) if verdict is SatVerdict.SAT else None
        k, verdict, model, secs = first_witness([e.cnf.clauses for e in live], self.solver, budget)
        for j, e in enumerate(live):
            self._record(T, split, f"{stage} ({len(live)} raced)", verdict if k in (None, j) else SatVerdict.UNKNOWN,
                         secs, e)
        return verdict, self._run(live[k], T, model) if k is not None else None

    def horizon(self, T: int, mins: tuple[int, int, int]) -> tuple[SatVerdict, Run | None]:
        """T in this splitter's cube: SAT with a witness if some split is, UNSAT if every split is.
        Without global barriers there are no phase lengths: one CNF with the time left."""
        if self.barriers != "global":
            return self._weaker(T)
        splits = _splits(mins, T)
        split_cover(mins, T, splits)
        unknown = False
        for split in splits:
            verdict, run = self.decide(T, split)
            if verdict is SatVerdict.SAT:
                return verdict, run
            unknown |= verdict is SatVerdict.UNKNOWN
        return (SatVerdict.UNKNOWN if unknown else SatVerdict.UNSAT), None

    def _weaker(self, T: int) -> tuple[SatVerdict, Run | None]:
        """T with per-PE or no barriers, for a witness first (with half the time left; their UNSAT
        proves nothing here), then the CNF of this mode decides T. A run with global barriers is a run
        of these machines too, so at or above the global bound the global splits of T are tried;
        below it, the runs whose phases lie in `_band`."""
        deadline = self.deadline
        if deadline is not None:
            self.deadline = time.perf_counter() + self._left(0.5)
        try:
            band = self._band(T)
            if band:
                verdict, run = self._full(T, None, self._left(), stage="phase bands", band=band)
                if verdict is SatVerdict.SAT:
                    return verdict, run
            for split in _splits(self.prob.phase_minimum(), T):
                verdict, run = self.decide(T, split)
                if verdict is SatVerdict.SAT:
                    return verdict, run
        finally:
            self.deadline = deadline
        return self._full(T, None, self._left())

    def _band(self, T: int) -> dict | None:
        """For T below the global bound L1 + L2 + L3 by k cycles: phase 1 in the first L1 + k cycles,
        phase 3 in the last L3 + k, phase 2 between them overlapping each by k, i.e. the global
        minimum split with neighbouring phases overlapping by k cycles (a restriction: witness only).
        Without barriers the cycles a phase 2 leaves idle at the global minimum are filled this way."""
        L1, L2, L3 = self.prob.phase_minimum()
        k = L1 + L2 + L3 - T
        if k <= 0:
            return None
        return {1: (0, L1 - 1 + k), 2: (L1 - k, T - L3 - 1 + k), 3: (T - L3 - k, T - 1)}

    def decide(self, T: int, split: tuple[int, int, int]) -> tuple[SatVerdict, Run | None]:
        if self._out_of_time():
            return SatVerdict.UNKNOWN, None
        enc = Encoding(self.prob, T, EncodingModes(split=split, cube=self.cube))
        if enc.cnf.nv <= self.QUICK_VARS:
            verdict, model = self._call(enc, T, split, "full", self._left(0.5, self.QUICK))
            if verdict is not SatVerdict.UNKNOWN:
                return verdict, self._run(enc, T, model) if verdict is SatVerdict.SAT else None
        for rotation in ([self.rotation] if self.rotation else []) + [None]:
            stage = "phase 1 pinned" + (", rotation-invariant" if rotation else "")
            k = 0
            while k < self.PINS:
                verdict, pin = self._pin(split[0], rotation, k)
                if verdict is SatVerdict.UNSAT and k == 0 and rotation is None:
                    return SatVerdict.UNSAT, None
                if pin is None:
                    break
                pins = [p for _, p in self.pins[(split[0], rotation)][k:min(k + self.race, self.PINS)] if p]
                k += len(pins)
                last = rotation is None and k >= self.PINS
                budget = self._left() if last else self._left(self.PIN_SHARE, self.PIN_CAP)
                verdict, run = self._pinned(T, split, pins, budget, rotation, stage)
                if verdict is SatVerdict.SAT:
                    return verdict, run
        return self._full(T, split, self._left())


@dataclasses.dataclass(frozen=True)
class _Query:
    """What a cube task needs to rebuild the problem in a worker process (picklable)."""

    variant: str
    n: int
    m: int
    d: int | None
    placement: dict | None
    barriers: str
    solver: str
    mins: tuple[int, int, int]
    width: int = _Splitter.RACE  # solver processes per cube


def solve_cube(q: _Query, cube: Cube, deadline: float | None, splitter: _Splitter | None = None):
    """Decide one cube (a task; `deadline` in epoch seconds): (verdict, witness or None, attempts)."""
    if splitter is None:
        left = None if deadline is None else time.perf_counter() + deadline - time.time()
        splitter = _Splitter(BitProblem(q.variant, q.n, q.m, q.d, q.placement), q.solver, left, None, q.barriers,
                             cube.pes, q.width)
    first = len(splitter.attempts)
    verdict, run = splitter.horizon(cube.T, q.mins)
    if run is not None:
        run = dataclasses.replace(run, placement=q.placement)
    return verdict, run, splitter.attempts[first:]


def search(variant: str, n: int, m: int, d: int | None = None, *, placement: dict | None = None,
           barriers: str = "global", options: SearchOptions = DEFAULTS, **keywords) -> SearchResult:
    """Minimum cycles of `variant` attention on m PEs, with `barriers` (global, pe or none), the
    inputs where `placement` puts them; how it searches is `options` (a `SearchOptions`), any of
    whose fields may also be given by name (`search("masked", 3, 3, timeout=60)`).

    With global barriers T rises from the lemma bound L1 + L2b + L3 (with `lemmas=False`, from the
    slot-counting bound L1 + L2a + L3, so that the solver refutes the T in between itself); without
    them from the barrier-free bound (`BitProblem.free_minimum`). Each T is split into the m^depth cubes
    of `cubes.cubes` (coverage checked), run on `workers` local processes or the Dask scheduler at
    `cluster`; T is SAT iff some cube is. A cube left undecided leaves T unresolved; the search then
    goes on looking for a witness at larger T, so a timeout still reports the best schedule found and
    the largest T proven impossible. `state` names a file of finished cubes to resume from and
    record to. `width` is the number of solver processes each cube runs at once (default: this
    machine's cores shared by the local workers running cubes, at least one; one on a cluster).
    Every witness is replayed by `check_run`; one it rejects raises, as the encoding would then be
    wrong. `progress(attempt)` sees each solver call, `on_cube(cube, verdict, seconds, done,
    total)` each finished cube.
    """
    o = options.with_keywords("search", keywords)
    start = time.perf_counter()
    if barriers not in BARRIERS:
        raise BadInput(f"unknown barrier mode {barriers!r}; expected one of {', '.join(BARRIERS)}")
    if variant in VARIANTS and all(isinstance(x, int) and x >= 1 for x in (n, m, d or n)):
        check_search(variant, n, m, d)          # before the problem is built: it alone can take GBs
    prob = BitProblem(variant, n, m, d, placement)
    if not isinstance(o.depth, int) or not 0 <= o.depth <= 4:
        raise BadInput(f"cube depth must be 0..4, got {o.depth!r}")
    counting = prob.phase_minimum(spread=False)
    strong = prob.phase_minimum()
    mins = strong if o.lemmas else counting
    if barriers == "global":
        lb, bound = sum(mins), sum(strong)
        unsat_by = "slot counting" if lb == sum(counting) else "lemma L2b"
    else:
        lb = bound = prob.free_minimum()
        unsat_by = "slot counting" if lb == -(-len(prob.ops) // m) else "lemma L5"
    max_T = o.max_T if o.max_T is not None else bound + 2 * prob.n + 4
    per_T = len(cubes(prob, lb, o.depth))
    width = o.width
    if width is None:  # a cluster's worker runs one cube per thread; here the cores are shared
        width = 1 if o.cluster else max(1, (os.cpu_count() or 1) // max(1, min(o.workers, per_T)))
    query = _Query(variant, n, m, prob.d, placement, barriers, o.solver, mins, width)
    deadline = None if o.timeout is None else time.time() + o.timeout
    key = {"variant": variant, "n": n, "m": m, "d": prob.d, "barriers": barriers,
           "placement": None if placement is None else repr(sorted(placement.items()))}
    saved = SearchState(o.state, key, placement)
    runner = None  # started when a cube is to be solved: a resumed search may need none
    splitters: dict = {}  # in-process cubes keep their splitter (relaxation cache) across T
    attempts: list[Attempt] = []
    n_cubes = n_done = 0
    # no run is shorter than lb: the T below are refuted without a solver call
    unsat_below, unsat_seconds = lb - 1, 0.0
    resolved, found = True, None  # resolved: every T so far proven UNSAT
    try:
        for T in range(lb, max_T + 1):
            t_start, unknown = time.perf_counter(), False
            todo = cubes(prob, T, o.depth)
            check_coverage(prob, todo)
            n_cubes += len(todo)
            pending = []
            for c in todo:
                verdict, run = saved.done.get(c.name, (SatVerdict.UNKNOWN, None))
                if verdict is SatVerdict.UNKNOWN:
                    pending.append(c)
                else:
                    n_done += 1
                    found = found or run
            if found is None and pending:
                runner = runner or engine(o.workers, o.cluster, per_T)
                if isinstance(runner, InProcess):
                    until = None if o.timeout is None else start + o.timeout
                    args = [(query, c, deadline, splitters.setdefault(c.choice, _Splitter(
                        prob, o.solver, until, o.progress, barriers, c.pes, width))) for c in pending]
                else:
                    args = [(query, c, deadline) for c in pending]
                results = runner.imap(solve_cube, args)
                for k, (verdict, run, calls) in results:
                    attempts += calls
                    if o.progress and not isinstance(runner, InProcess):  # a worker's calls, once its cube is done
                        for a in calls:
                            o.progress(a)
                    saved.record(pending[k].name, verdict, run)
                    n_done += verdict is not SatVerdict.UNKNOWN
                    unknown |= verdict is SatVerdict.UNKNOWN
                    if o.on_cube:
                        o.on_cube(pending[k], verdict, sum(a.seconds for a in calls), n_done, n_cubes)
                    if verdict is SatVerdict.SAT:
                        found = run
                        results.close()
                        break
            if found is not None:
                problems = check_run(found)
                if problems:
                    raise AssertionError(f"encoding produced an invalid schedule: {problems[:3]}")
                return SearchResult(variant, n, m, prob.d, T if resolved else None, unsat_below, unsat_seconds, T,
                                    time.perf_counter() - start, found, bound, tuple(attempts),
                                    "" if resolved else f"T={unsat_below + 1} unresolved (timeout)", unsat_by,
                                    lb - 1, barriers, n_cubes, n_done)
            if unknown:
                resolved = False
            elif resolved:
                unsat_below, unsat_seconds, unsat_by = T, time.perf_counter() - t_start, "SAT solver"
            if o.timeout is not None and time.perf_counter() - start >= o.timeout:
                break
    finally:
        if runner is not None:
            runner.close()
    reason = "timeout" if o.timeout is not None and time.perf_counter() - start >= o.timeout else \
        f"no schedule up to max_T={max_T}"
    return SearchResult(variant, n, m, prob.d, None, unsat_below, unsat_seconds, None,
                        time.perf_counter() - start, None, bound, tuple(attempts), reason,
                        unsat_by, lb - 1, barriers, n_cubes, n_done)
