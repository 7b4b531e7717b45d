"""The property table and the option records are written once: a property added to the table
without what decides it fails at import, a kind of check not listed in the registry fails here, and
each option record's fields are the options of its command, with the record's defaults."""

from __future__ import annotations

import dataclasses
import pkgutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import ringproof.proofs.ring.properties as registry

from ringproof.proofs.cli import search as search_cli
from ringproof.proofs.cli.verify import parser
from ringproof.proofs.options import DEFAULTS
from ringproof.proofs.ring.properties import KINDS, Kind, unhandled
from ringproof.proofs.options import Options
from ringproof.proofs.results import PROPERTIES, PROPERTY_TABLE, SOLVER_PROPERTIES, Property
from ringproof.proofs.ring.prover import undecided
from ringproof.proofs.search.options import CLI_DEFAULTS, SearchOptions


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


def test_a_property_added_to_the_table_without_its_kind_stops_the_registry_import():
    """The table edited in a fresh process (results.py with one more `Property` line): importing the
    registry then fails, naming the property."""
    source = Path(sys.modules["ringproof.proofs.results"].__file__).read_text()
    line = '    Property("well-formed", "checks", "every op\'s PE and indices lie in range"),\n'
    assert line in source
    edited = source.replace(line, line + '    Property("dummy", "checks"),\n')
    code = ("import sys, types; m = types.ModuleType('ringproof.proofs.results'); "
            "sys.modules[m.__name__] = m; exec(sys.stdin.read(), m.__dict__); "
            "import ringproof.proofs.ring.properties")
    done = subprocess.run([sys.executable, "-c", code], input=edited, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "ImportError" in done.stderr and "dummy" in done.stderr


def test_a_property_no_one_decides_fails():
    assert undecided() == []
    assert undecided(PROPERTY_TABLE + (Property("dummy", "counting"),)) == ["dummy"]
    assert undecided(PROPERTY_TABLE + (Property("dummy", "by hand"),)) == ["dummy"]
    assert undecided(PROPERTY_TABLE + (Property("dummy", "figure"),)) == ["dummy"]


def test_each_row_says_what_proved_means_what_it_rests_on_and_what_it_is_per():
    """The words of the report come from the table; a figure rests on properties of the table and
    is asked for by name (not in the default run)."""
    from ringproof.proofs.report.words import PROPERTY_WORDS
    from ringproof.proofs.results import DEFAULT_PROPERTIES, property_row
    assert set(PROPERTY_WORDS) == set(PROPERTIES)
    for p in PROPERTY_TABLE:
        assert p.per in ("phase", "output array", "schedule") and set(p.rests_on) <= set(PROPERTIES), p
    assert property_row("placement").per == "output array"
    assert property_row("balance").rests_on == ("coverage",)
    assert property_row("memory").rests_on == ("ring-locality", "data-flow")
    assert DEFAULT_PROPERTIES == tuple(p for p in PROPERTIES if p not in ("balance", "memory"))
    assert DEFAULTS.properties == DEFAULT_PROPERTIES


def test_every_kind_of_check_defined_is_in_the_registry():
    """A `Kind` written in a module of the registry but left out of its `KINDS` would never run."""
    defined = {id(v): f"{info.name}.{name}" for info in pkgutil.iter_modules(registry.__path__)
               for name, v in vars(import_module(f"{registry.__name__}.{info.name}")).items()
               if isinstance(v, Kind)}
    assert set(defined) - {id(k) for k in KINDS} == set(), sorted(defined.values())


# the command-line spelling of a record's field where it is not the field's name
_PROVE_SPELLING = {"properties": "property", "smt2_dir": "smt2", "size": "n", "progress": "quiet"}
_SEARCH_SPELLING = {"depth": "cube_depth", "lemmas": "no_lemmas", "progress": "quiet", "on_cube": "quiet"}


def _dests(p) -> set[str]:
    return {a.dest for a in p._actions}


def test_every_field_of_options_is_an_option_of_prove():
    """A field added to `Options` without its `prove` option (or an option without its field) fails."""
    fields = {_PROVE_SPELLING.get(f.name, f.name) for f in dataclasses.fields(Options)}
    assert fields <= _dests(parser())


def test_every_field_of_search_options_is_an_option_of_prove_search_with_its_default():
    p = search_cli.parser()
    fields = {f.name: _SEARCH_SPELLING.get(f.name, f.name) for f in dataclasses.fields(SearchOptions)}
    assert set(fields.values()) <= _dests(p)
    args = p.parse_args(["plain", "-n", "2", "-m", "2"])
    for name, dest in fields.items():
        if dest == name:
            assert getattr(args, dest) == getattr(CLI_DEFAULTS, name), name
    assert args.no_lemmas is not CLI_DEFAULTS.lemmas and args.cube_depth == CLI_DEFAULTS.depth


def test_a_layout_row_is_checked_against_its_tokens():
    """A `Layout` row whose readings of the mask disagree with its tokens names itself (the import
    of context_parallel refuses it), and a row without its readings cannot be written."""
    import pytest
    from ringproof.schedules import context_parallel as cp

    assert [line for row in cp.SCHEDULES.values() for line in cp.disagreements(row)] == []
    zig = cp.SCHEDULES["zigzag"]
    for field, wrong in (("allowed", lambda P, r, a: 0), ("last_step", lambda P, a: P.m),
                         ("row_before", lambda P, ix, tokens: True), ("owner", lambda P, t: 0)):
        bad = dataclasses.replace(zig, layout=dataclasses.replace(zig.layout, **{field: wrong}))
        found = cp.disagreements(bad)
        assert found and all(line.startswith("zigzag: ") for line in found), field
    with pytest.raises(TypeError):
        cp.Layout("dummy", zig.layout.token, zig.layout.owner, zig.layout.slot)


def test_a_context_parallel_target_is_one_row():
    """One more `ContextParallel` row in SCHEDULES (in a fresh process, the module's source edited)
    is two targets of the one target table, each built, with a layout for `prove layout` and
    `prove conform`; a row whose layout disagrees with its tokens stops the import."""
    from ringproof.schedules import context_parallel

    source = Path(context_parallel.__file__).read_text()
    line = '    ContextParallel("striped", STRIPED, True, None, "m | n", _multiple_of_m,\n'
    assert line in source
    row = line.replace('"striped"', '"dummy"') + ('                    "a dummy", lambda P, r: 0, "0"),\n')
    code = ("import sys, types; m = types.ModuleType('ringproof.schedules.context_parallel'); "
            "sys.modules[m.__name__] = m; exec(sys.stdin.read(), m.__dict__); "
            "from ringproof.proofs.cli import targets; t = targets.table(); "
            "print(*[n for n in t if 'dummy' in n], 'dummy' in targets.layouts(), "
            "targets.parallel('dummy-bwd').layout.name, targets.resolve('dummy').name, "
            "targets.resolve('dummy-bwd').name)")
    done = subprocess.run([sys.executable, "-c", code], input=source.replace(line, row + line),
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["dummy", "dummy-bwd", "True", "striped", "dummy", "dummy-bwd"], done.stderr
    wrong = row.replace("STRIPED", "replace(STRIPED, last_step=lambda P, a: 1)")
    edited = source.replace(line, wrong + line).replace("from dataclasses import dataclass, field",
                                                        "from dataclasses import dataclass, field, replace")
    done = subprocess.run([sys.executable, "-c", code], input=edited, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "ImportError" in done.stderr and "striped: last_step" in done.stderr


def test_every_target_is_a_row_of_the_one_table_with_its_machine():
    """The packed targets (every `VARLEN` row, NAME and NAME-bwd, and every `ALLGATHER` row) are rows
    of `targets.table()` beside the ring's, each resolved to its machine's record; `registry()`
    keeps the ring machine's; `prove report` takes a target of another machine too."""
    import io

    import pytest

    from ringproof.errors import BadInput
    from ringproof.proofs.cli import report, targets
    from ringproof.schedules.allgather import ALLGATHER, AllGather
    from ringproof.schedules.documents import VARLEN, Varlen

    rows = targets.table()
    packed = {n for n in VARLEN} | {f"{n}-bwd" for n in VARLEN}
    assert {n for n, r in rows.items() if r.machine == "packed"} == packed
    assert {n for n, r in rows.items() if r.machine == "allgather"} == set(ALLGATHER)
    assert all(isinstance(targets.resolve(n), Varlen) and targets.resolve(n).name == n for n in packed)
    assert all(isinstance(targets.resolve(n), AllGather) for n in ALLGATHER)
    assert targets.resolve("zigzag-varlen-bwd").backward
    assert set(targets.registry()) == {n for n, r in rows.items() if r.machine == "ring"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        rows["llama3"].machine = "ring"
    with pytest.raises(Exception, match="machine 'boat'"):
        targets.Target("x", "algo1", "ALGO1", machine="boat")
    with pytest.raises(BadInput, match="needs -o FILE"):     # past the machine: `prove report` covers every target
        report.main(["llama3", "--format", "pdf"], io.StringIO(), io.StringIO())


def test_stays_and_notes_are_records_written_as_dicts_too():
    """A schedule file writes `stays` and `notes` as dicts (docs/dsl.md): they become `Stays` and
    `Notes` at construction, still read by their keys; a key neither has is bad input."""
    import pytest
    from ringproof.errors import BadInput
    from ringproof.schedules.algo1 import ALGO1
    from ringproof.schedules.dsl import Notes, Stays

    S = dataclasses.replace(ALGO1, notes={"claims": {"MAC": "n**3"}}, stays={"peak": [("phase1", None)]})
    assert S.notes == Notes(claims={"MAC": "n**3"}) and S.notes["claims"] == {"MAC": "n**3"}
    assert S.stays == Stays(peak=(("phase1", None),)) and S.stays.peak == S.stays["peak"]
    assert dataclasses.replace(S, stays=S.stays).stays is S.stays and {**S.stays}["on_request"] is False
    assert not Stays() and Stays(on_request=True) and ALGO1.stays.last
    for field, bad in (("stays", {"peaks": []}), ("notes", {"claim": {}}), ("stays", [("phase1", None)])):
        with pytest.raises(BadInput, match=field):
            dataclasses.replace(ALGO1, **{field: bad})
