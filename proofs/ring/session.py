"""A proving session: the budget its solvers run under, and the caches of what they found.

Everything besides the query itself that can change a solver's answer is in the `Budget` (the seed,
the resource limits, the wall-clock backstop, the second solver); a `Session` owns every cache of
answers found under one budget (side conditions, their known points, the carry windows proved from
them, the normalizer's digit terms, the interval reader's forms, counts, per-PE forms, the lemma
library's status), so an answer is never reused under another budget. Nothing is cached outside a
session.

Sharing is explicit: a caller that wants answers reused (a `prove report` over several targets)
makes one `Session(budget)` and passes it down; a library call that is passed none works in a fresh
session of its own, so nothing one call found changes what another reports.
"""

from __future__ import annotations

from ringproof.proofs.ring.budgets import Budget
from ringproof.proofs.ring.intervals import Intervals
from ringproof.proofs.ring.lemmas import prove_library


class Session:
    """One budget and the caches of answers found under it (see the module doc)."""

    def __init__(self, budget: Budget = Budget()):
        self.budget = budget
        self.intervals = Intervals()  # linear forms, branches, bounds and boxes of Z3 terms
        self.proven: dict = {}        # side conditions: (fact id, assumption ids) -> (proved?, the ASTs)
        self.models: dict = {}        # assumption ids -> (the ASTs, [points satisfying them])
        self.variables: dict = {}     # AST id -> (a term holding it, names of its uninterpreted constants)
        self.terms: dict = {}         # (operation, operand ids) -> (the digit term it built, operands)
        self.literals: dict = {}      # int -> its digit term (the normalizer's `const`)
        self.windows: dict = {}       # (term, unit, windows, assumption ids) -> (its carry window, ...)
        self.counted: dict = {}       # ids of `counting.counted_from(schedule)` -> (those parts, Counts)
        self.balanced: dict = {}      # id(schedule) -> (schedule, its per-PE forms: `spread.forms`)
        self.deciders: dict = {}      # id(shape) -> (shape, the counter's nests.Decider and its answers)
        self.enumerated: dict = {}    # (id(phase), n, m, d) -> (phase, its counts and active ops per PE per ring step)
        self.exact: dict = {}         # (form, case) -> the form with the floors the case decides made exact (`gaps`)
        self._lemmas: dict | None = None
        self._softmax: dict | None = None

    def decider(self, shape):
        """The counter's `nests.Decider` for `shape` under this budget, one per shape: the counts,
        the per-PE forms and the memory figures ask it many of the same questions."""
        hit = self.deciders.get(id(shape))
        if hit is None or hit[0] is not shape:
            from ringproof.proofs.figures.nests import Decider
            hit = self.deciders[id(shape)] = (shape, Decider(shape, self.budget))
        return hit[1]

    def lemma_status(self) -> dict:
        """Lemma name -> proved? (the library is proved, or read from its file cache, once)."""
        if self._lemmas is None:
            self._lemmas = {r.name: r.proved for r in prove_library()}
        return self._lemmas

    def softmax_status(self, found: dict | None = None) -> dict:
        """Part name -> proved? of the online-softmax lemma (proved once per session; `found`: this
        answer as a worker of the session's pool proved it, kept where none is yet)."""
        if self._softmax is None:
            if found is None:
                from ringproof.proofs.cp.online_softmax import cited
                found = cited()
            self._softmax = found
        return self._softmax

    def softmax_known(self) -> dict | None:
        """`softmax_status`'s answer where this session has it, else None (nothing proved)."""
        return self._softmax
