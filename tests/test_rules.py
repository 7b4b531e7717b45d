"""The ring's rules are written once (model/ring/rules.py): the simulator, the bit-level checker and
the symbolic twins compute the same successor PE from it, and a second machine description fails
loudly in every reader written for this one. The CNF cannot read the description: it states what
it is written for, and tests/test_bitlevel_check.py pins it to the checker that reads the rules
(each rule broken in a run: both reject it)."""

from __future__ import annotations

import numpy as np

import ringproof.model.bitlevel.check  # noqa: F401  (each reader states its assumptions on import)
import ringproof.model.ring.machine  # noqa: F401
import ringproof.proofs.ring.properties  # noqa: F401
import ringproof.proofs.search.cnf  # noqa: F401
from ringproof.model.ring.rules import RULES, RingRules, unmet
from ringproof.proofs.ring.iterations import next_pe
from ringproof.schedules.expr import evaluate, var


def test_the_successor_is_the_same_on_every_backend():
    for m in range(1, 7):
        pes = np.arange(1, m + 1)
        want = [p % m + 1 for p in range(1, m + 1)]
        assert [RULES.next_pe(p, m) for p in range(1, m + 1)] == want
        assert RULES.next_pe(pes, m).tolist() == want
        assert [evaluate(next_pe(var("l")), {"l": p, "m": m}) for p in range(1, m + 1)] == want
        assert [RULES.next_pe(p, m, first=0) for p in range(m)] == [(p + 1) % m for p in range(m)]


def test_a_second_machine_fails_in_every_reader_written_for_this_one():
    assert unmet(RULES) == {}
    wider = unmet(RingRules(link_capacity=2))
    assert {"the bit-level CNF (proofs/search/cnf.py)", "the ring simulator (model/ring/machine.py)"} <= set(wider)
    assert "the no-conflict twins (distinct busy slots)" in unmet(RingRules(ops_per_cycle=2))
    assert "the bit-level CNF (proofs/search/cnf.py)" in unmet(RingRules(hop=2))
    assert len(unmet(RingRules(persists=False))) >= 3
