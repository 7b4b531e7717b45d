"""The property table, verdicts and results: plain data, JSON-ready; printing is the CLI's job."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Property:
    """One property of a schedule, one row of the table every part reads it from.

    `name`: the `--property` choice, the JSON value, the report's label. `decided_by`: "checks"
    (the kinds of `ringproof.proofs.ring.properties`, each with a symbolic and a concrete twin),
    "counting" (closed forms checked against enumeration) or "figure" (a closed form of the load,
    `ringproof.proofs.figures`, derived for every n and compared with enumeration at small sizes).
    `words`: what "proved" means, as the report says it. `rests_on`: the properties whose proof the
    verdict needs (a figure counted over terms is only as good as their coverage). `per`: what one
    result is about ("phase", "output array" or "schedule"). `default`: run where no `--property`
    names the properties (a figure row is asked for by name: where it is not derived it is
    `unknown`, which would make most schedules' default runs unknown)."""

    name: str
    decided_by: str
    words: str = ""
    rests_on: tuple = ()
    per: str = "phase"
    default: bool = True


# Every property, in the order results are listed and reported.
PROPERTY_TABLE = (
    Property("well-formed", "checks", "every op's PE and indices lie in range"),
    Property("coverage", "checks", "every term of the computation is computed exactly once"),
    Property("no-conflict", "checks", "no PE runs two ops in one cycle and no two ops write one place at once"),
    Property("ring-locality", "checks", "every running sum and operand an op needs is on its PE when it runs"),
    Property("data-flow", "checks", "every operand taken from an earlier phase is final when it is read"),
    Property("placement", "checks", "every output element ends on the PE its placement declares",
             per="output array"),
    Property("counts", "counting", "its cycle and op counts are the closed forms below",
             rests_on=("coverage",), per="schedule"),
    Property("balance", "figure",
             "the spread of active ops over its PEs (max − min) is a closed form derived for every n and "
             "compared with enumeration at small sizes, equal to the spread it claims if it claims one",
             rests_on=("coverage",), per="schedule", default=False),
    Property("memory", "figure",
             "the exact peak of data on its busiest PE is a closed form derived for every n from stay hints "
             "Z3 proved and compared with the ring model's peak at small sizes, equal to the peak it claims "
             "if it claims one", rests_on=("ring-locality", "data-flow"), per="schedule", default=False),
)
PROPERTIES = tuple(p.name for p in PROPERTY_TABLE)
DEFAULT_PROPERTIES = tuple(p.name for p in PROPERTY_TABLE if p.default)
SOLVER_PROPERTIES = tuple(p.name for p in PROPERTY_TABLE if p.decided_by == "checks")
FIGURES = tuple(p.name for p in PROPERTY_TABLE if p.decided_by in ("counting", "figure"))


def property_row(name: str) -> Property:
    """The table's row of `name`."""
    return next(p for p in PROPERTY_TABLE if p.name == name)


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
