"""Records of the bit-level ring machine: ops, sends, runs and solver results (plain data, no solver)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

OP_KINDS = ("MAC1", "EAC", "DIV", "MAC3")
VARIANTS = ("plain", "symmetric", "masked")
BARRIERS = ("global", "pe", "none")  # every op of a phase before the next phase: everywhere, per PE, never
PHASE_OF = {"MAC1": 1, "EAC": 2, "DIV": 2, "MAC3": 3}


@dataclass(frozen=True)
class BitOp:
    """One op executed by PE `p` in cycle `t`; indices 0-based, `l` only for MAC1/MAC3."""

    t: int
    p: int
    kind: str
    i: int
    j: int
    l: int | None = None


@dataclass(frozen=True)
class BitSend:
    """PE `p` puts `datum` on its outgoing link during cycle `t`; it is on PE p+1 from cycle t+1."""

    t: int
    p: int
    datum: tuple


@dataclass(frozen=True)
class Run:
    """A complete schedule of one attention variant on the ring, for concrete sizes, on the machine
    whose phases are separated by `barriers` (one of BARRIERS)."""

    variant: str
    n: int
    m: int
    d: int
    T: int
    ops: tuple[BitOp, ...]
    sends: tuple[BitSend, ...]
    placement: dict | None = None
    barriers: str = "global"

    def to_json(self) -> dict:
        """Its ops as [t, p, kind, i, j, l] and sends as [t, p, datum]: the one JSON form of a run's
        steps (`prove search --json`'s schedule, a search state file's witness)."""
        return {"ops": [[o.t, o.p, o.kind, o.i, o.j, o.l] for o in self.ops],
                "sends": [[s.t, s.p, list(s.datum)] for s in self.sends]}

    @classmethod
    def from_json(cls, doc: dict, variant: str, n: int, m: int, d: int, T: int,
                  placement: dict | None = None, barriers: str = "global") -> "Run":
        """The run whose steps `to_json` wrote as `doc`, on the query given."""
        return cls(variant, n, m, d, T, tuple(BitOp(*o) for o in doc["ops"]),
                   tuple(BitSend(t, p, tuple(x)) for t, p, x in doc["sends"]), placement, barriers)


class SatVerdict(Enum):
    """A SAT answer about a run or a number of cycles (the prover's verdicts are
    `ringproof.proofs.results.Verdict`: proved, refuted, unknown)."""

    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class CheckResult:
    """Outcome of `sat_check_run`: SAT means the fixed schedule is a valid run of the machine."""

    verdict: SatVerdict
    seconds: float
    solver: str
    variables: int = 0
    clauses: int = 0
    reason: str = ""

    @property
    def valid(self) -> bool | None:
        return {SatVerdict.SAT: True, SatVerdict.UNSAT: False}.get(self.verdict)


@dataclass(frozen=True)
class Attempt:
    """One solver call of the search: horizon T, phase lengths tried, stage, verdict, time."""

    T: int
    split: tuple[int, int, int]
    verdict: SatVerdict
    seconds: float
    variables: int
    clauses: int
    stage: str = "full"  # "full", "phase-1 relaxation" or "phase 1 pinned" (", rotation-invariant")
    # split is None without global barriers: there are no phase lengths then


@dataclass(frozen=True)
class SearchResult:
    """Outcome of `search`.

    `min_cycles` is set only when proven: a valid schedule with that many cycles exists (`schedule`,
    checked by the independent checker) and every T below it is unsatisfiable. Otherwise `best_sat` and
    `unsat_below` bound the unknown minimum from above and below. `lower_bound` is the bound of the
    lemmas L1-L3 (docs/bitlevel.md); `lemma_below` is the largest T the search refuted by a lemma,
    without a solver call (slot counting, or L2b when the search starts at the lemma bound); every T
    from there up to `unsat_below` was refuted by the solver.
    """

    variant: str
    n: int
    m: int
    d: int
    min_cycles: int | None
    unsat_below: int | None
    unsat_seconds: float | None
    best_sat: int | None
    seconds: float
    schedule: Run | None
    lower_bound: int
    attempts: tuple[Attempt, ...] = field(default=())
    reason: str = ""
    unsat_by: str = "slot counting"  # how unsat_below was refuted: "slot counting", "lemma L2b" or "SAT solver"
    lemma_below: int | None = None
    barriers: str = "global"
    cubes: int = 0  # cubes of the search (every horizon decided), and how many of them are finished
    cubes_done: int = 0

    @property
    def proven(self) -> bool:
        return self.min_cycles is not None
