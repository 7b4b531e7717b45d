"""Verdicts and results: plain data, JSON-ready; printing is the CLI's job."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Property:
    """One property of a schedule: `name` (the `--property` choice, the JSON value, the report's
    label) and how it is decided: "checks" (the kinds of `ringproof.proofs.ring.properties`, each
    with a symbolic and a concrete twin) or "counting" (closed forms checked against enumeration)."""

    name: str
    decided_by: str


# Every property, in the order results are listed and reported.
PROPERTY_TABLE = (
    Property("well-formed", "checks"),
    Property("coverage", "checks"),
    Property("no-conflict", "checks"),
    Property("ring-locality", "checks"),
    Property("data-flow", "checks"),
    Property("placement", "checks"),
    Property("counts", "counting"),
)
PROPERTIES = tuple(p.name for p in PROPERTY_TABLE)
SOLVER_PROPERTIES = tuple(p.name for p in PROPERTY_TABLE if p.decided_by == "checks")
TIERS = ("parametric", "per-m", "bounded")


class Verdict(enum.Enum):
    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"

    @property
    def exit_code(self) -> int:
        """The CLI's exit code for an overall verdict (64 is bad input, raised as BadInput)."""
        from ringproof.errors import Exit

        return {"proved": Exit.OK, "refuted": Exit.REFUTED, "unknown": Exit.UNKNOWN}[self.value]

    @staticmethod
    def combine(verdicts) -> "Verdict":
        """A refutation wins, then unknown; proved only if every part is proved."""
        verdicts = list(verdicts)
        if Verdict.REFUTED in verdicts:
            return Verdict.REFUTED
        if Verdict.UNKNOWN in verdicts or not verdicts:
            return Verdict.UNKNOWN
        return Verdict.PROVED


@dataclass(frozen=True)
class Counterexample:
    """A concrete violation: sizes, the iterations involved (paper's index names), what breaks."""

    n: int
    m: int
    check: str
    message: str
    iterations: tuple = ()
    replay: dict = field(default_factory=dict)   # what the concrete replay found
    d: int | None = None                         # d, for a schedule where d is not n

    def command(self, target: str, prop: str | None = None) -> str:
        """The command that re-runs the failing check `prop` at this size (with no property: the
        ring model's run of this size)."""
        shape = f" -d {self.d}" if self.d is not None else ""
        if self.replay.get("lengths"):         # a packing of a varlen schedule
            lengths = ",".join(map(str, self.replay["lengths"]))
            return (f"prove {target} --tier bounded --lengths {lengths} -m {self.m}" if prop is not None
                    else f"prove simulate {target} --lengths {lengths} -m {self.m}{shape}")
        if prop is not None:
            return f"prove {target} --tier bounded --property {prop} -n {self.n}{shape} -m {self.m}"
        return f"prove simulate {target} -n {self.n}{shape} -m {self.m}"

    def sizes(self) -> str:
        """`n=…, m=…` (with `d=…` for a schedule where d is a parameter), as messages name an instance."""
        shape = f", d={self.d}" if self.d is not None else ""
        return f"n={self.n}{shape}, m={self.m}"

    def to_json(self) -> dict:
        d = asdict(self)
        d["iterations"] = list(self.iterations)
        return d


@dataclass(frozen=True)
class Result:
    property: str
    phase: str
    verdict: Verdict
    tier: str
    seconds: float
    reason: str = ""
    counterexample: Counterexample | None = None
    checks: int = 0
    details: dict = field(default_factory=dict)
    solver: dict = field(default_factory=dict)   # what it rested on: lemmas, Z3 statistics, cvc5

    def to_json(self) -> dict:
        return {
            "property": self.property, "phase": self.phase, "verdict": self.verdict.value,
            "tier": self.tier, "seconds": round(self.seconds, 4), "reason": self.reason,
            "checks": self.checks,
            "counterexample": self.counterexample.to_json() if self.counterexample else None,
            "details": self.details, "solver": self.solver,
        }
