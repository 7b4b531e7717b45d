"""The property table and the option defaults are written once: a property added to the table
without a kind of check that reports it fails, and `prove`'s options default to the library's."""

from __future__ import annotations

from ringproof.proofs.cli.verify import parser
from ringproof.proofs.options import DEFAULTS
from ringproof.proofs.ring.properties import KINDS, Kind, unhandled
from ringproof.proofs.results import PROPERTIES, PROPERTY_TABLE, SOLVER_PROPERTIES


def test_every_property_decided_by_checks_has_a_kind_and_no_kind_reports_another():
    assert unhandled() == []
    assert unhandled(SOLVER_PROPERTIES + ("dummy",)) == ["dummy"]
    assert unhandled(SOLVER_PROPERTIES[1:]) == [SOLVER_PROPERTIES[0]]
    assert unhandled(kinds=KINDS + (Kind("dummy.kind", "dummy", "", None, None),)) == ["dummy"]


def test_properties_come_from_the_table_in_its_order():
    assert PROPERTIES == tuple(p.name for p in PROPERTY_TABLE)
    assert set(SOLVER_PROPERTIES) < set(PROPERTIES)


def test_prove_options_default_to_the_library_defaults():
    args = parser().parse_args(["algo1"])
    for name in ("tier", "max_n", "max_m", "timeout", "seed", "jobs", "cross_timeout"):
        assert getattr(args, name) == getattr(DEFAULTS, name), name
