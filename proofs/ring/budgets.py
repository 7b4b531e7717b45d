"""Z3 resource limits (`rlimit`) per query class, so that a verdict does not depend on the load, and
the `Budget` record a session's solvers run under.

A wall-clock timeout makes the same query `unknown` on a busy machine and proved on an idle one. Z3's
resource counter is deterministic for a given query, seed and Z3 version, so each class of query gets
a budget in those units, about ten times the most the registered schedules need (the measurements:
docs/proofs.md, "Deterministic verdicts"). The user's `--timeout` stays on every query as a backstop
that should never be the one to stop it.
"""

from __future__ import annotations

from dataclasses import dataclass

LEMMA = 10_000_000            # one lemma of the normalization library (lemmas.py)
SIDE_CONDITION = 10_000_000   # a window or range fact while normalizing (normalize.Ctx.prove)
QUERY = 40_000_000            # one parametric check (smt.discharge)
INDUCTION_TRY = 2_500_000     # one seed's try at a counting identity (induction._holds)
COUNT_DECIDE = 300_000        # one decision of the counter (nests.Decider): a bound dominates, a case is empty
PEAK_BOUND = 4_000_000        # one case of the memory peak's bound (peak_bound.at_most): no PE holds more there
PEAK_CASES = 1_000            # cases the peak's bound may visit in one cell of a regime before it gives up
LONG_PEAK_CASES = 20_000      # the same where the peak was asked for (`long_peaks`): zigzag's needs more than 1,000
BOUND_LEMMA = 20_000_000      # one lemma of the bit-level lower bound (proofs/search/lower_bounds.py, bound.py)
GAP = 4_000_000               # one query of a gap statement (proofs/search/gaps.py; at most 0.28 M measured)


@dataclass(frozen=True)
class Budget:
    """What a solver may spend, and with which seed: `timeout_ms` is a wall-clock backstop per
    query, the rlimits (deterministic resource units, the constants above) decide when it gives
    up; `second_solver` ('cvc5' or None) re-checks every unsat within `second_timeout_ms`;
    `long_peaks`: the exact memory peaks marked long are derived too (`prove --exact-peak`)."""

    timeout_ms: int = 10_000
    seed: int = 0
    query_rlimit: int = QUERY
    side_condition_rlimit: int = SIDE_CONDITION
    induction_rlimit: int = INDUCTION_TRY
    count_rlimit: int = COUNT_DECIDE
    second_solver: str | None = None
    second_timeout_ms: int = 60_000
    long_peaks: bool = False      # also derive the exact peaks a schedule's hints mark long (stays["on_request"])

    @property
    def peak_cases(self) -> int:
        """Cases the memory peak's bound may visit in one cell (`peak_bound.Cases`)."""
        return LONG_PEAK_CASES if self.long_peaks else PEAK_CASES
