"""memory: the peak number of data a PE holds (`ringproof.model.ring.memory`), measured on the
ring model. No closed form is derived yet: the figure is printed at one size (n = 16, m = 4 where
allowed), and a claim `notes={"claims": {"memory": "..."}}` is refuted at the smallest size where
the measured peak (the largest over PEs) differs, or else unknown (agreement up to n = 12 only) —
never proved."""

from __future__ import annotations

from ringproof.model.ring.memory import peak_per_pe
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.results import Counterexample, Verdict
from ringproof.proofs.ring.spread import figure_size

CLAIM_N = 12


def summary(schedule) -> dict:
    """{"closed_form": None, "reason", "at": {"n", "m", "per_pe", "peak"}} (JSON-ready)."""
    out = {"closed_form": None, "reason": "not derived for every n (measured on the ring model)"}
    size = figure_size(schedule)
    if size is not None:
        per = peak_per_pe(build_trace(schedule, *size))
        out["at"] = {"n": size[0], "m": size[1], "per_pe": per, "peak": max(per)}
    return out


def check_claim(schedule, claim: str):
    """(verdict, reason, Counterexample or None) of a claimed peak."""
    from ringproof.proofs.ring.counting import claim_at
    for n, m, d in sorted(schedule.shape.sizes(CLAIM_N), key=lambda s: (s[0], s[2], s[1])):
        peaks = peak_per_pe(build_trace(schedule, n, m, d))
        got, claimed = max(peaks), claim_at(claim, n, m, d, schedule.shape)   # it may name derived sizes
        if got != claimed:
            replay = {"confirmed": True, "count": "memory", "measured": got, "per_pe": peaks}
            return (Verdict.REFUTED, f"claim memory = {claim}: the measured peak is {got} at n={n}, m={m}",
                    Counterexample(n, m, "claim memory", f"measured peak {got}, claimed {claimed}", (),
                                   replay, d=schedule.shape.own("d", d)))
    return (Verdict.UNKNOWN, f"claim memory = {claim} agrees with the ring model for every n ≤ {CLAIM_N} only "
            "(no closed form derived)", None)


def readable(details: dict) -> str:
    at = details.get("at")
    if at is None:
        return f"memory: {details['reason']}"
    return (f"memory: peak data held per PE {details['reason']}; at n={at['n']}, m={at['m']}: "
            f"{'/'.join(map(str, at['per_pe']))}")
