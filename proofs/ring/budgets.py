"""Z3 resource limits (`rlimit`) per query class, so that a verdict does not depend on the load.

A wall-clock timeout makes the same query `unknown` on a busy machine and proved on an idle one. Z3's
resource counter is deterministic for a given query, seed and Z3 version, so each class of query gets
a budget in those units, about ten times the most the registered schedules need (measured with
`prove algoN --jobs 1` under Z3 4.x: side conditions up to 0.7 M, parametric checks up to 3.6 M, a
library lemma 31 k, a successful induction try 0.9 M). The user's `--timeout` stays on every query
as a backstop that should never be the one to stop it.
"""

LEMMA = 10_000_000            # one lemma of the normalization library (lemmas.py)
SIDE_CONDITION = 10_000_000   # a window or range fact while normalizing (normalize.Ctx.prove)
QUERY = 40_000_000            # one parametric check (smt.discharge)
INDUCTION_TRY = 2_500_000     # one seed's try at a counting identity (induction._holds)
COUNT_DECIDE = 300_000        # one decision of the counter (nests.Decider): a bound dominates, a case is empty
