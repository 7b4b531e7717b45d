"""The figures as the prover passes them: `Counts`, `Balance` and `Memory`, frozen, picklable (they
come back from the pool's workers) and JSON-ready through `to_json`, which writes the counts
result's `details` (and the balance and memory rows' own) key for key.

A figure is derived for every n and compared with enumeration at small sizes; whether it stands
for every n also depends on what it rests on (the property table's `rests_on`), which only the
prover knows after its checks: `unproved(why)` moves a form from "proved" to "derived".
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

from ringproof.proofs.results import Counterexample, Verdict


class ClaimVerdict(NamedTuple):
    """What a figure's check of a claim finds (`spread.check_claim`, `held.check_claim`): the
    verdict, why, and the replayed counterexample where it is refuted."""

    verdict: Verdict
    reason: str
    counterexample: Counterexample | None


class IdleCycles(NamedTuple):
    """The cycles of the machine in which a PE with nothing to do in a ring step does not hold the
    others back (`spread.idle_cycles`): a closed form in k, m, kd and "", or None and why not."""

    cycles: object          # sympy.Expr | None
    why: str


@dataclass(frozen=True)
class Claimed:
    """The verdict on a schedule's claim of a figure (`notes["claims"]`), with why and where."""

    what: str
    claim: str
    verdict: Verdict
    reason: str = ""
    counterexample: Counterexample | None = None


@dataclass(frozen=True)
class Balance:
    """The spread of active ops over the PEs (`spread.summary`): `spread` where it stands for every
    n, `derived` where it is derived but what it rests on is not proved (`why` says so), else
    neither and `reason` says why not; the per-PE, per-phase and per-ring-step forms, the figure
    measured at one size where no spread is derived, and the claim's verdict."""

    spread: str | None
    reason: str
    per_pe: dict | None = None
    per_phase: dict | None = None
    on_coverage: tuple = ()
    recounted: tuple = ()
    at: dict | None = None
    steps: dict = field(default_factory=dict)      # per_step, per_step_reason, idle_pes
    derived: str | None = None
    unproved_because: str | None = None
    claim: Claimed | None = None
    seconds: float = 0.0

    @classmethod
    def from_summary(cls, summary: dict, claim: Claimed | None = None, seconds: float = 0.0) -> "Balance":
        """The record of `spread.summary(..., steps=False)`'s answer."""
        return cls(summary["spread"], summary["reason"], summary.get("per_pe"), summary.get("per_phase"),
                   tuple(summary.get("on_coverage", ())), tuple(summary.get("recounted", ())), summary.get("at"),
                   claim=claim, seconds=seconds)

    @property
    def form(self) -> str | None:
        """The spread derived, whether or not it stands."""
        return self.spread if self.spread is not None else self.derived

    @property
    def why_not(self) -> str:
        """Why no spread is derived, as a row's reason."""
        return f"spread not derived: {self.reason}"

    def with_steps(self, steps: dict) -> "Balance":
        return replace(self, steps=dict(steps))

    def unproved(self, why: str) -> "Balance":
        """The spread printed as derived, not proved: it `why` ("rests on ...")."""
        return replace(self, spread=None, derived=self.spread, unproved_because=why, reason=f"it {why}")

    def to_json(self) -> dict:
        out = {"spread": self.spread, "reason": self.reason}
        for key in ("per_pe", "per_phase"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.on_coverage:
            out["on_coverage"] = list(self.on_coverage)
        if self.recounted:
            out["recounted"] = list(self.recounted)
        if self.at is not None:
            out["at"] = self.at
        out.update(self.steps)
        if self.derived is not None:
            out["derived"] = self.derived
        return out


@dataclass(frozen=True)
class Memory:
    """The memory figures (`held.summary`): the exact peak on the busiest PE (`closed_form` where it
    stands for every n, `derived` where what it rests on is not proved, `unproved_because` saying
    so), `reason` where it is not derived, `mismatch` where the form derived from the stays
    disagrees with the ring model; the inputs each PE holds from cycle 0 (a lower bound of its
    peak), the peak measured at one size, and the claim's verdict."""

    closed_form: str | None
    reason: str
    peak_at: list | None = None
    hint_checks: int | None = None
    rests_on: tuple = ()
    inputs_on_pe: str | None = None
    inputs_reason: str | None = None
    at: dict | None = None
    mismatch: bool = False
    derived: str | None = None
    unproved_because: str | None = None
    claim: Claimed | None = None
    seconds: float = 0.0

    @classmethod
    def from_summary(cls, summary: dict, claim: Claimed | None = None, seconds: float = 0.0) -> "Memory":
        """The record of `held.summary`'s answer."""
        return cls(summary["closed_form"], summary["reason"], summary.get("peak_at"), summary.get("hint_checks"),
                   tuple(summary.get("rests_on", ())), summary.get("inputs_on_pe"), summary.get("inputs_reason"),
                   summary.get("at"), summary.get("mismatch", False), claim=claim, seconds=seconds)

    @property
    def form(self) -> str | None:
        """The exact peak derived, whether or not it stands."""
        return self.closed_form if self.closed_form is not None else self.derived

    @property
    def why_not(self) -> str:
        """Why no exact peak is derived, as a row's reason (`held`'s reasons name the exact peak)."""
        return self.reason

    def unproved(self, why: str) -> "Memory":
        """The peak printed as derived, not proved: it `why` ("rests on ...")."""
        return replace(self, closed_form=None, derived=self.closed_form, unproved_because=why,
                       reason=f"exact peak not proved: it {why}")

    def to_json(self) -> dict:
        out = {"closed_form": self.closed_form, "reason": self.reason}
        if self.form is not None:
            out.update({"peak_at": self.peak_at, "hint_checks": self.hint_checks, "rests_on": list(self.rests_on)})
        out["inputs_on_pe"] = self.inputs_on_pe
        if self.inputs_reason:
            out["inputs_reason"] = self.inputs_reason
        if self.at is not None:
            out["at"] = self.at
        if self.derived is not None:
            out["derived"] = self.derived
            out["unproved_because"] = self.unproved_because
        return out


@dataclass(frozen=True)
class Counts:
    """The counts of a schedule as text (`counting.counts`): cycles, ops per kind, per phase, the
    utilization, their readable forms, the counting hints, the kinds not derived and why; the
    claims; the verdict on the claims of cycles and ops (`verdict`, `reason`, `counterexample`),
    the phases whose op counts rest on their coverage (`bijections`), and the load figures."""

    cycles: str | None
    ops: dict
    phase_cycles: dict
    utilization: str | None
    phase_utilization: dict
    readable: dict
    hints: object
    not_derived: dict
    claims: dict
    verdict: Verdict = Verdict.PROVED
    reason: str = ""
    counterexample: Counterexample | None = None
    bijections: tuple = ()
    balance: Balance | None = None
    memory: Memory | None = None
    seconds: float = 0.0

    def to_json(self) -> dict:
        out = {"cycles": self.cycles, "ops": self.ops, "phase_cycles": self.phase_cycles,
               "utilization": self.utilization, "phase_utilization": self.phase_utilization,
               "readable": self.readable, "hints": self.hints}
        if self.not_derived:
            out["not_derived"] = self.not_derived
        out["claims"] = self.claims
        if self.balance is not None:
            out["balance"] = self.balance.to_json()
        if self.memory is not None:
            out["memory"] = self.memory.to_json()
        if self.bijections:
            out["bijections"] = list(self.bijections)
        return out
