"""The registry's twin rule, as a test helper: a refutation must replay as the *same* check."""

from ringproof.model.ring.machine import run
from ringproof.model.ring.trace import build_trace
from ringproof.proofs.ring.properties import check_trace


def assert_same_check_replays(schedule, result):
    """The concrete twin of the check that failed reports a finding at the counterexample's size;
    for counts, the ring model measures there the count the replay names."""
    cex = result.counterexample
    assert cex is not None and cex.replay.get("confirmed"), result.reason
    if result.property == "counts":
        ring = run(schedule, cex.n, cex.m, d=cex.d)
        assert {"cycles": ring.cycles, **ring.ops}.get(cex.replay["count"], 0) == cex.replay["measured"], cex
        return
    found = check_trace(build_trace(schedule, cex.n, cex.m), [result.property])[(result.property, result.phase)]
    assert any(f.check == cex.check for f in found), (
        f"{schedule.name}: {result.property}/{result.phase}: '{cex.check}' refuted at n={cex.n}, m={cex.m}, "
        f"but its concrete twin finds nothing there (other findings: {[f.check for f in found]})")
