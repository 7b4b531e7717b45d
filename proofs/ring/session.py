"""A proving session: the budget its solvers run under, and the caches of what they found.

Everything besides the query itself that can change a solver's answer is in the `Budget` (the seed,
the resource limits, the wall-clock backstop, the second solver); a `Session` owns every cache of
answers found under one budget (side conditions, their known points, the interval reader's forms,
counts, the lemma library's status), so an answer is never reused under another budget. Nothing
is cached outside a session.

`Session.for_budget(budget)` is the session a caller that passes none shares with every other such
caller under the same budget (what a `prove` process reuses from one target to the next); a caller
that wants nothing shared makes its own `Session(budget)`.
"""

from __future__ import annotations

from ringproof.proofs.ring.budgets import Budget
from ringproof.proofs.ring.intervals import Intervals
from ringproof.proofs.ring.lemmas import prove_library


class Session:
    """One budget and the caches of answers found under it (see the module doc)."""

    _shared: dict = {}     # Budget -> the Session callers that pass none share

    def __init__(self, budget: Budget = Budget()):
        self.budget = budget
        self.intervals = Intervals()  # linear forms, branches, bounds and boxes of Z3 terms
        self.proven: dict = {}        # side conditions: (fact id, assumption ids) -> (proved?, the ASTs)
        self.models: dict = {}        # assumption ids -> (the ASTs, [points satisfying them])
        self.variables: dict = {}     # AST id -> (AST, names of its uninterpreted constants)
        self.counted: dict = {}       # id(schedule) -> (schedule, Counts)
        self._lemmas: dict | None = None

    @classmethod
    def for_budget(cls, budget: Budget = Budget()) -> "Session":
        """The session shared by every caller under `budget` that passes none of its own."""
        if budget not in cls._shared:
            cls._shared[budget] = cls(budget)
        return cls._shared[budget]

    def lemma_status(self) -> dict:
        """Lemma name -> proved? (the library is proved, or read from its file cache, once)."""
        if self._lemmas is None:
            self._lemmas = {r.name: r.proved for r in prove_library()}
        return self._lemmas
