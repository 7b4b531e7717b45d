"""Resolve a TARGET argument: a registered algorithm name or the path of a user's schedule file."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from pathlib import Path

from ringproof.schedules import usercode
from ringproof.schedules.dsl import Schedule
from ringproof.schedules.usercode import deepest_line, time_limit
from ringproof.errors import BadInput, InternalError


# The paper's registered schedules: name -> (module of ringproof.schedules, attribute). `resolve`
# imports the one module a name needs, not every registered schedule.
PAPER = {"algo1": ("algo1", "ALGO1"), "algo1-printed": ("algo1", "ALGO1_PRINTED"),
         "algo1-general": ("algo1", "ALGO1_GENERAL"), "algo2": ("algo2", "ALGO2"),
         "algo2-printed": ("algo2", "ALGO2_PRINTED"), "algo2-general": ("algo2", "ALGO2_GENERAL"),
         "algo2-fast": ("algo2_fast", "ALGO2_FAST"), "algo2-even": ("algo2_even", "ALGO2_EVEN"),
         "algo3": ("algo3", "ALGO3"), "algo3-printed": ("algo3", "ALGO3_PRINTED"),
         "algo3-general": ("algo3", "ALGO3_GENERAL"), "algo3-fast": ("algo3_fast", "ALGO3_FAST")}


def registry() -> dict:
    """Every registered schedule by its name."""
    return {**{name: _paper(name) for name in PAPER}, **_context()}


def _paper(name: str) -> Schedule:
    module, attribute = PAPER[name]
    schedule = getattr(importlib.import_module(f"ringproof.schedules.{module}"), attribute)
    if schedule.name != name:
        raise InternalError(f"the registry names {module}.{attribute} {name!r}, the schedule {schedule.name!r}")
    return schedule


def _context() -> dict:
    from ringproof.schedules import context_parallel as cp
    return {s.name: s for name in cp.SCHEDULES for s in (cp.FORWARDS[name], cp.BACKWARDS[f"{name}-bwd"])}


def printed_defects(target: str):
    """(variant, defect names) of a registered printed variant, for its formula differences; else None."""
    from ringproof.schedules import algo1, algo2, algo3

    mods = {f"{mod.__name__.rsplit('.', 1)[-1]}-printed": mod for mod in (algo1, algo2, algo3)}
    mod = mods.get(target)
    return (mod.variant, mod.PRINTED_DEFECTS) if mod else None


def resolve(target: str) -> Schedule:
    if target in PAPER:
        return _paper(target)
    context = _context()
    if target in context:
        return context[target]
    path = Path(target)
    if path.suffix == ".py":
        return load_file(path)
    if _exists(path):
        raise BadInput(f"{target!r} is not a schedule file: a schedule file is Python source ending in .py")
    reg = registry()
    # a context-parallel target's backward twin is named once, as a suffix: the line stays short
    names = [name for name in sorted(reg) if not (name.endswith("-bwd") and name[:-4] in reg)]
    raise BadInput(f"unknown target {target[:40]!r}: expected one of {', '.join(names)} (a context-parallel "
                   "one also as NAME-bwd) or the path of a schedule file (.py)")


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:          # e.g. a name longer than the file system allows
        return False


def load_file(path: Path) -> Schedule:
    """Import a user's schedule file and return its schedule (`SCHEDULE`, or its only Schedule)."""
    try:
        is_file, is_dir = path.is_file(), path.is_dir()
    except OSError as err:
        raise BadInput(f"cannot read schedule file {str(path)[:80]!r}: {err.strerror}") from None
    if is_dir:
        raise BadInput(f"{str(path)!r} is a directory; a schedule file is Python source ending in .py")
    if not is_file:
        raise BadInput(f"schedule file {str(path)!r} does not exist")
    name = f"ringproof_user_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with time_limit(usercode.IMPORT_SECONDS, f"importing {path}", (spec.origin, str(path.resolve()))), \
                contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)     # what it prints goes to stderr: stdout is ours
    except BadInput as err:
        located = str(path) in str(err) or str(path.resolve()) in str(err)
        raise BadInput(str(err) if located else f"{path}: {err}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # noqa: B036 -- a user's file may fail in any way, sys.exit included
        line = deepest_line(err, spec.origin) or deepest_line(err, str(path.resolve())) or str(path)
        if isinstance(err, SystemExit):
            raise BadInput(f"{line}: importing {path} called sys.exit({err.code!r}); a schedule file "
                           "must not exit") from None
        raise BadInput(f"cannot import {path}: {line}: {type(err).__name__}: {err}") from None
    from ringproof.schedules.documents import Varlen

    if isinstance(getattr(module, "SCHEDULE", None), (Schedule, Varlen)):
        return module.SCHEDULE        # a Varlen: a packed-sequence schedule (`prove` routes it)
    if "SCHEDULE" in vars(module):
        raise BadInput(f"{path}: SCHEDULE = {repr(module.SCHEDULE)[:40]} is not a Schedule "
                       "(assign SCHEDULE = Schedule(...), or Varlen(...) for packed sequences)")
    found = [v for v in vars(module).values() if isinstance(v, Schedule)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise BadInput(f"{path} defines no Schedule (assign one to SCHEDULE)")
    raise BadInput(f"{path} defines {len(found)} schedules; say which one with SCHEDULE = ...")
