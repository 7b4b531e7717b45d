"""Composing schedules (Phase.derive, Schedule.derive, relies_on) and declaring computations."""

import pytest

from ringproof import computation
from ringproof.errors import BadInput
from ringproof.model.ring.machine import run
from ringproof.schedules.algo1 import ALGO1, ALGO1_GENERAL
from ringproof.schedules.problems import MASKED, PLAIN


def test_derive_changes_one_field_and_keeps_the_rest():
    s = ALGO1.derive("algo1-assign", {"phase3": dict(first=True)})
    assert [p.name for p in s.phases] == [p.name for p in ALGO1.phases]
    assert s.phases[:3] == ALGO1.phases[:3] and s.phase("phase3").loops == ALGO1.phase("phase3").loops
    assert run(ALGO1, 4, 2).ok and not run(s, 4, 2).ok      # y = only its last term


def test_derive_lists_the_witnesses_that_rest_on_the_change():
    look = ALGO1_GENERAL.derive("x", {"phase1": dict(bounds={"j": (1, "n")})}).notes["look"]
    assert len(look) == 1 and look[0].startswith("phase2a relies on phase1: w1_last")
    assert ALGO1.derive("y", {"phase3": dict(first=True)}).notes.look == ()


@pytest.mark.parametrize("changes,match", [
    ({"phase1": dict(colour=1)}, "not Step fields"),
    ({"phase1": dict(bounds={"z": (1, 2)})}, "has no loop 'z'"),
    ({"phase9": dict(guard=False)}, "has no phase 'phase9'"),
])
def test_derive_rejects_bad_changes(changes, match):
    with pytest.raises(BadInput, match=match):
        ALGO1.derive("bad", changes)


def test_computation_reads_masks_and_reductions():
    y = MASKED.equations[-1]
    assert (y.reduce, y.reduce_at) == ("n", (0, 1)) and y.where is not None
    assert PLAIN.equations[0].reduce == "d" and PLAIN.output.name == "y"


@pytest.mark.parametrize("arrays,eqs,match", [
    ({"a": "n d", "y": "n"}, ["y[A] += a[A, C] + a[A, C]"], "cannot read equation"),
    ({"a": "n d", "y": "n"}, ["y[A] += a[A, C] * b[C]"], "not declared"),
    ({"a": "n d", "y": "n"}, ["y[A] += a[A] * a[A, C]"], "takes 2 indices"),
    ({"a": "n d", "y": "n"}, ["y[C] += a[A, C] * a[A, C]"], "both n and d"),
    ({"a": "n d", "y": "n"}, ["y[A] += a[A, C] * a[A, C] if C < A"], "cannot read mask"),
])
def test_computation_rejects_what_it_cannot_read(arrays, eqs, match):
    with pytest.raises(BadInput, match=match):
        computation("bad", arrays, eqs)
