"""The causal rings' stay hints (`schedules/causal_stays.py`) by target name, for the tests: the
registered targets carry theirs on request (docs/proofs.md "Balance and memory")."""

from ringproof.schedules.causal_stays import causal_backward_stays, causal_stays
from ringproof.schedules.context_parallel import BACKWARD_FORMS, FORMS, SCHEDULES


def stays(name: str) -> dict:
    """The hints of the causal forward `name` (no "on_request": the tests derive them)."""
    return causal_stays(SCHEDULES[name].layout.readings, FORMS)


def backward_stays(name: str) -> dict:
    """The hints of the causal backward `name`-bwd (`name` its forward's)."""
    return causal_backward_stays(SCHEDULES[name].layout.readings, BACKWARD_FORMS)
