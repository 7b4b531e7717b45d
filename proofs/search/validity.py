"""Whether Z3 proves a claim for every value of its free variables, under a deterministic resource
limit: the one way the search's lemmas (lower_bounds.py, bound.py, gaps.py) ask Z3."""

from __future__ import annotations

import z3


def valid(claim, hyps=(), *, rlimit: int, seconds: float = 60.0) -> bool:
    """`hyps ⇒ claim` for all values: Z3 finds its negation unsat within `rlimit` resource units (a
    query class's limit in proofs/ring/budgets.py, so the answer does not depend on the load). Sat
    or unknown (the limit reached) is not valid; `seconds` is a wall-clock backstop only."""
    s = z3.Solver()
    s.set("rlimit", rlimit)
    s.set("timeout", int(seconds * 1000))
    s.add(*hyps)
    s.add(z3.Not(claim))
    return s.check() == z3.unsat
