"""The figure modules' old names under ringproof.proofs.ring still import, as the moved modules."""

import importlib

import pytest

from ringproof.proofs.ring import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_name_is_the_moved_module(old):
    assert importlib.import_module(f"ringproof.proofs.ring.{old}") is importlib.import_module(MOVED[old])


def test_a_name_never_moved_is_not_found():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ringproof.proofs.ring.no_such_module")
