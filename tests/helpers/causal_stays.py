"""The causal forwards' stay hints (`schedules/causal_stays.py`) by target name, for the tests:
the registered targets carry them on request."""

from ringproof.schedules.causal_stays import causal_stays
from ringproof.schedules.context_parallel import FORMS, SCHEDULES


def stays(name: str) -> dict:
    """The hints of the causal forward `name` (no "on_request": the tests derive them)."""
    return causal_stays(SCHEDULES[name].layout.name, FORMS)
