"""Resolve a TARGET argument: a registered algorithm name or the path of a user's schedule file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from ringproof.schedules.dsl import Schedule
from ringproof.errors import BadInput


def registry() -> dict:
    from ringproof.schedules import algo1, algo2, algo2_fast, algo3

    return {s.name: s for s in (algo1.ALGO1, algo1.ALGO1_PRINTED, algo1.ALGO1_GENERAL,
                                algo2.ALGO2, algo2.ALGO2_PRINTED, algo2.ALGO2_GENERAL, algo2_fast.ALGO2_FAST,
                                algo3.ALGO3, algo3.ALGO3_PRINTED, algo3.ALGO3_GENERAL)}


def printed_defects(target: str):
    """(variant, defect names) of a registered printed variant, for its formula differences; else None."""
    from ringproof.schedules import algo1, algo2, algo3

    mods = {f"{mod.__name__.rsplit('.', 1)[-1]}-printed": mod for mod in (algo1, algo2, algo3)}
    mod = mods.get(target)
    return (mod.variant, mod.PRINTED_DEFECTS) if mod else None


def resolve(target: str) -> Schedule:
    reg = registry()
    if target in reg:
        return reg[target]
    path = Path(target)
    if path.suffix == ".py":
        return load_file(path)
    if _exists(path):
        raise BadInput(f"{target!r} is not a schedule file: a schedule file is Python source ending in .py")
    raise BadInput(f"unknown target {target[:80]!r}: expected one of {', '.join(sorted(reg))} "
                   "or the path of a schedule file (.py)")


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:          # e.g. a name longer than the file system allows
        return False


def load_file(path: Path) -> Schedule:
    """Import a user's schedule file and return its schedule (`SCHEDULE`, or its only Schedule)."""
    try:
        is_file = path.is_file()
    except OSError as err:
        raise BadInput(f"cannot read schedule file {str(path)[:80]!r}: {err.strerror}") from None
    if not is_file:
        raise BadInput(f"schedule file {str(path)!r} does not exist")
    name = f"ringproof_user_{abs(hash(str(path.resolve())))}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except BadInput as err:
        located = str(path) in str(err) or str(path.resolve()) in str(err)
        raise BadInput(str(err) if located else f"{path}: {err}") from None
    except Exception as err:  # a user's file may fail in any way; report it in one line
        raise BadInput(f"cannot import {path}: {type(err).__name__}: {err}") from None
    if isinstance(getattr(module, "SCHEDULE", None), Schedule):
        return module.SCHEDULE
    found = [v for v in vars(module).values() if isinstance(v, Schedule)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise BadInput(f"{path} defines no Schedule (assign one to SCHEDULE)")
    raise BadInput(f"{path} defines {len(found)} schedules; say which one with SCHEDULE = ...")
